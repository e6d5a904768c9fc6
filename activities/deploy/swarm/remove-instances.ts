import { instanceAddressesByService } from '../../../data/deploy/instances';
import { findService } from '../../../data/deploy/registry';
import { DeployDeps } from '../deps';
import { setReplicas, untilExtraTasksStopped } from './swarm-services';
import { names, syncService } from './task-instances';

/**
 * Sets the swarm service to the service's desired count and waits until the extra tasks have stopped;
 * the registry then follows the tasks (instances whose tasks stopped, the ones asked for or not, leave it).
 */
export function removeSwarmInstances(deps: DeployDeps) {
  return async (input: { instanceIds: string[] }): Promise<void> => {
    if (input.instanceIds.length === 0) return;
    for (const serviceName of (await instanceAddressesByService(deps.db, input.instanceIds)).keys()) {
      const service = await findService(deps.db, serviceName);
      if (!service) continue;
      const { swarmService } = names(deps, serviceName);
      await setReplicas(deps.docker, swarmService, service.desired_instances);
      await untilExtraTasksStopped(deps.docker, swarmService, service.desired_instances);
      await syncService(deps, serviceName);
    }
  };
}
