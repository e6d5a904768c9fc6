import { retireCanary } from './canary';
import { DeployDeps } from './deps';
import { drainInstances } from './drain-instances';
import { listReconcilableServices, removeDeploymentContainers } from './list-reconcilable-services';
import { removeInstances } from './remove-instances';
import { removeOrphanInstances } from './remove-orphan-instances';
import { removeServiceContainers } from './remove-service-containers';
import { prepareServiceNetwork } from './service-network';
import { startInstances } from './start-instance';
import { surveyInstances } from './survey-instances';
import { waitInstancesHealthy } from './wait-until-healthy';

/**
 * The activities a deploy driver implements: how instances start, become healthy, are surveyed and go.
 * The docker driver runs each instance as a container of the engine beside the worker.
 */
export function dockerDriver(deps: DeployDeps) {
  return {
    prepareServiceNetwork: prepareServiceNetwork(deps, 'bridge'),
    startInstances: startInstances(deps),
    waitInstancesHealthy: waitInstancesHealthy(deps),
    drainInstances: drainInstances(deps),
    withdrawInstances: (input: { deploymentId: string; instanceIds: string[] }) => removeInstances(deps)({ instanceIds: input.instanceIds }),
    surveyInstances: surveyInstances(deps),
    removeInstances: removeInstances(deps),
    removeOrphanInstances: removeOrphanInstances(deps),
    removeServiceContainers: removeServiceContainers(deps),
    listReconcilableServices: listReconcilableServices(deps, removeDeploymentContainers(deps)),
    // The promoted canary's containers already serve as the service's own: only its cluster goes.
    retireCanary: retireCanary(deps),
  };
}

export type DeployDriverActivities = ReturnType<typeof dockerDriver>;
