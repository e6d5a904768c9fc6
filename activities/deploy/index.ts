import { recordJobRun } from '../job-log';
import { buildServiceImage } from './build-service-image';
import { deleteService } from './delete-service';
import { DeployDeps } from './deps';
import { deregisterService } from './deregister-service';
import { drainInstances } from './drain-instances';
import { ensureImage } from './ensure-image';
import { failDeployment } from './fail-deployment';
import { finishDeployment } from './finish-deployment';
import { listReconcilableServices, removeDeploymentContainers } from './list-reconcilable-services';
import { loadDeployPlan } from './load-deploy-plan';
import { pruneServiceImages } from './prune-service-images';
import { recordDeployStage } from './record-deploy-stage';
import { registerDeployment } from './register-deployment';
import { registerInstances } from './register-instances';
import { removeImage } from './remove-image';
import { removeInstances } from './remove-instances';
import { removeOrphanInstances } from './remove-orphan-instances';
import { removeServiceContainers } from './remove-service-containers';
import { removeServiceImages } from './remove-service-images';
import { setServiceStatus } from './set-service-status';
import { startInstance, startInstances } from './start-instance';
import { surveyInstances } from './survey-instances';
import { waitInstancesHealthy, waitUntilHealthy } from './wait-until-healthy';
import { swarmDriver } from './swarm';

/**
 * The activities a deploy driver implements: how instances start, become healthy, are surveyed and go.
 * The docker driver runs each instance as a container of the engine beside the worker.
 */
function dockerDriver(deps: DeployDeps) {
  return {
    startInstances: startInstances(deps),
    waitInstancesHealthy: waitInstancesHealthy(deps),
    withdrawInstances: (input: { deploymentId: string; instanceIds: string[] }) => removeInstances(deps)({ instanceIds: input.instanceIds }),
    surveyInstances: surveyInstances(deps),
    removeInstances: removeInstances(deps),
    removeOrphanInstances: removeOrphanInstances(deps),
    removeServiceContainers: removeServiceContainers(deps),
    listReconcilableServices: listReconcilableServices(deps, removeDeploymentContainers(deps)),
  };
}

export type DeployDriverActivities = ReturnType<typeof dockerDriver>;

/**
 * Deploy, scale, undeploy and reconcile activities, each safe to repeat. Only the deployments worker has
 * them. The workflows read the same under either driver (DEPLOY_DRIVER); only these differ.
 */
export function createDeployActivities(deps: DeployDeps) {
  const driver: DeployDriverActivities = deps.config.deployDriver === 'swarm' ? swarmDriver(deps) : dockerDriver(deps);
  return {
    loadDeployPlan: loadDeployPlan(deps),
    recordDeployStage: recordDeployStage(deps),
    buildServiceImage: buildServiceImage(deps),
    ensureImage: ensureImage(deps),
    // Only deploy runs started before INSTANCES_AS_ONE_STEP call these two; they ran on the docker driver.
    startInstance: startInstance(deps),
    waitUntilHealthy: waitUntilHealthy(deps),
    ...driver,
    registerDeployment: registerDeployment(deps),
    registerInstances: registerInstances(deps),
    drainInstances: drainInstances(deps),
    removeImage: removeImage(deps),
    pruneServiceImages: pruneServiceImages(deps),
    finishDeployment: finishDeployment(deps),
    failDeployment: failDeployment(deps),
    setServiceStatus: setServiceStatus(deps),
    deregisterService: deregisterService(deps),
    removeServiceImages: removeServiceImages(deps),
    deleteService: deleteService(deps),
    recordJobRun: recordJobRun(deps),
  };
}

export type DeployActivities = ReturnType<typeof createDeployActivities>;
