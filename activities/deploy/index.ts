import { recordJobRun } from '../job-log';
import { buildServiceImage } from './build-service-image';
import { deleteService } from './delete-service';
import { DeployDeps } from './deps';
import { deregisterService } from './deregister-service';
import { drainInstances } from './drain-instances';
import { ensureImage } from './ensure-image';
import { failDeployment } from './fail-deployment';
import { finishDeployment } from './finish-deployment';
import { listReconcilableServices } from './list-reconcilable-services';
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
import { startInstance } from './start-instance';
import { surveyInstances } from './survey-instances';
import { waitUntilHealthy } from './wait-until-healthy';

/** Deploy, scale, undeploy and reconcile activities, each safe to repeat. Only the deployments worker has them. */
export function createDeployActivities(deps: DeployDeps) {
  return {
    loadDeployPlan: loadDeployPlan(deps),
    recordDeployStage: recordDeployStage(deps),
    buildServiceImage: buildServiceImage(deps),
    ensureImage: ensureImage(deps),
    startInstance: startInstance(deps),
    waitUntilHealthy: waitUntilHealthy(deps),
    registerDeployment: registerDeployment(deps),
    registerInstances: registerInstances(deps),
    drainInstances: drainInstances(deps),
    removeInstances: removeInstances(deps),
    removeOrphanInstances: removeOrphanInstances(deps),
    removeImage: removeImage(deps),
    pruneServiceImages: pruneServiceImages(deps),
    finishDeployment: finishDeployment(deps),
    failDeployment: failDeployment(deps),
    surveyInstances: surveyInstances(deps),
    setServiceStatus: setServiceStatus(deps),
    listReconcilableServices: listReconcilableServices(deps),
    deregisterService: deregisterService(deps),
    removeServiceContainers: removeServiceContainers(deps),
    removeServiceImages: removeServiceImages(deps),
    deleteService: deleteService(deps),
    recordJobRun: recordJobRun(deps),
  };
}

export type DeployActivities = ReturnType<typeof createDeployActivities>;
