import { switchToDeployment } from '../../data/deploy/instances';
import { StartedInstance } from '../../domain/deploy';
import { refusalsAreFinal } from '../final-refusals';
import { DeployDeps } from './deps';

/**
 * The switch: in one transaction the new instances become the ones the gateway routes to, the instances
 * they replace start draining, and the service takes the deploy's image and settings. Repeating it
 * changes nothing more. Answers the replaced instances, for the workflow to stop after draining.
 */
export function registerDeployment({ db }: DeployDeps) {
  return async (input: { deploymentId: string; instances: StartedInstance[] }): Promise<{ replacedInstanceIds: string[] }> => refusalsAreFinal(() => switchToDeployment(db, input));
}
