import { log } from '@temporalio/activity';
import { serviceFilters } from '../../../data/deploy/labels';
import { pollUntil } from '../../poll-until';
import { DeployDeps } from '../deps';
import { isGone } from '../docker-errors';
import { removeServiceNetwork } from '../service-network';
import { findSwarmService, POLL_MS, removeSwarmService } from './swarm-services';
import { names } from './task-instances';
import { tasksOf } from './tasks';

/** Removes the swarm service, waits until its tasks' containers on this node are gone, then its overlay. */
export function removeSwarmServiceContainers(deps: DeployDeps) {
  const { docker, config } = deps;
  return async (input: { serviceName: string }) => {
    const { swarmService, canaryService } = names(deps, input.serviceName);
    await removeSwarmService(docker, canaryService);
    const existing = await findSwarmService(docker, swarmService);
    const removed = existing ? (await tasksOf(docker, swarmService)).filter((task) => task.DesiredState === 'running').length : 0;
    if (existing)
      await docker
        .getService(existing.ID)
        .remove()
        .catch((error) => (isGone(error) ? undefined : Promise.reject(error)));
    await pollUntil(POLL_MS, async () => {
      const left = await docker.listContainers({ all: true, filters: serviceFilters(config.deploy.scope, input.serviceName) });
      return left.length === 0 ? true : undefined;
    });
    try {
      await removeServiceNetwork(docker, { network: config.deploy.network, serviceName: input.serviceName, attach: config.deploy.attachContainers });
    } catch (error) {
      // A task on another node may still hold the overlay for a moment; the network is empty, and harmless.
      log.warn(`the overlay of ${input.serviceName} is not removed yet`, { reason: (error as Error).message });
    }
    return { removed };
  };
}
