import type { DeployDriverActivities } from '../docker-driver';
import { DeployDeps } from '../deps';
import { listReconcilableServices } from '../list-reconcilable-services';
import { prepareServiceNetwork } from '../service-network';
import { removeSwarmInstances } from './remove-instances';
import { removeOrphanSwarmInstances } from './remove-orphan-instances';
import { removeSwarmServiceContainers } from './remove-service-containers';
import { retireSwarmCanary } from './retire-canary';
import { startSwarmInstances } from './start-instances';
import { surveySwarmInstances } from './survey-instances';
import { waitSwarmInstancesHealthy } from './wait-instances-healthy';
import { withdrawDeployment } from './withdraw-deployment';

/**
 * The swarm driver: each deployed service is one swarm service whose tasks the swarm places on its nodes,
 * restarts, and rolls from one version to the next. The registry's instances are the tasks that serve,
 * kept in step from the swarm's task list; the edge routes to their own addresses on the service's overlay.
 */
export function swarmDriver(deps: DeployDeps): DeployDriverActivities {
  return {
    prepareServiceNetwork: prepareServiceNetwork(deps, 'overlay'),
    startInstances: startSwarmInstances(deps),
    waitInstancesHealthy: waitSwarmInstancesHealthy(deps),
    /** The undo of a deploy that failed: see withdrawDeployment. */
    withdrawInstances: (input: { deploymentId: string; instanceIds: string[] }) => withdrawDeployment(deps, input.deploymentId),
    listReconcilableServices: listReconcilableServices(deps, (deploymentId) => withdrawDeployment(deps, deploymentId)),
    surveyInstances: surveySwarmInstances(deps),
    /**
     * A scale down under the swarm: the swarm picks which tasks stop, so no instance is drained ahead of it.
     * Each task it stops keeps serving through its drain window while the edge lets go of it (the task list
     * is followed twice a second): nothing is taken out of the edge that the swarm then keeps running.
     */
    drainInstances: async () => undefined,
    removeInstances: removeSwarmInstances(deps),
    removeOrphanInstances: removeOrphanSwarmInstances(deps),
    removeServiceContainers: removeSwarmServiceContainers(deps),
    retireCanary: retireSwarmCanary(deps),
  };
}
