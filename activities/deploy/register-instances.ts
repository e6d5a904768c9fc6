import { registerHealthyInstances } from '../../data/deploy/instances';
import { StartedInstance } from '../../domain/deploy';
import { refusalsAreFinal } from '../final-refusals';
import { DeployDeps } from './deps';

/** Adds healthy instances to the ones the gateway routes to (scale up, replacements); repeating adds nothing. */
export function registerInstances({ db }: DeployDeps) {
  return async (input: { deploymentId: string; instances: StartedInstance[] }): Promise<void> => {
    await refusalsAreFinal(() => registerHealthyInstances(db, input));
  };
}
