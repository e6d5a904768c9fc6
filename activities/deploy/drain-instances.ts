import { drainInstanceRows } from '../../data/deploy/instances';
import { DeployDeps } from './deps';

/** Stops routing new requests to instances (they finish what they already have before they are removed). */
export function drainInstances({ db }: DeployDeps) {
  return async (input: { instanceIds: string[] }): Promise<void> => {
    await drainInstanceRows(db, input.instanceIds);
  };
}
