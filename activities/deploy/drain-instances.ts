import { INSTANCE_TABLE } from '../../data/deploy/registry';
import { DeployDeps } from './deps';

/** Stops routing new requests to instances (they finish what they already have before they are removed). */
export function drainInstances({ db }: DeployDeps) {
  return async (input: { instanceIds: string[] }): Promise<void> => {
    if (input.instanceIds.length > 0) await db(INSTANCE_TABLE).whereIn('id', input.instanceIds).update({ state: 'DRAINING' });
  };
}
