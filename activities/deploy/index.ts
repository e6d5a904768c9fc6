import { recordJobRun } from '../job-log';
import { finishRevert, judgeCanaryStep, readVersionCounters, recordRolloutState, registerCanary, shareWithCanary } from './canary';
import { buildServiceImage } from './build-service-image';
import { deleteService } from './delete-service';
import { DeployDeps } from './deps';
import { deregisterService } from './deregister-service';
import { ensureImage } from './ensure-image';
import { failDeployment } from './fail-deployment';
import { finishDeployment } from './finish-deployment';
import { loadDeployPlan } from './load-deploy-plan';
import { pruneServiceImages } from './prune-service-images';
import { recordDeployStage } from './record-deploy-stage';
import { recordRestarts } from './record-restarts';
import { notifyDeployOwners } from './notify-deploy-owners';
import { registerDeployment } from './register-deployment';
import { registerInstances } from './register-instances';
import { removeImage } from './remove-image';
import { removeServiceImages } from './remove-service-images';
import { setServiceStatus } from './set-service-status';
import { applyContainerLimits, readContainerLimits, recordServiceLimits, restoreContainerLimits } from './service-limits';
import { startInstance } from './start-instance';
import { waitUntilHealthy } from './wait-until-healthy';
import { DeployDriverActivities, dockerDriver } from './docker-driver';
import { swarmDriver } from './swarm';
import { awaitCertificateValidation } from './certificates/await-certificate-validation';
import { confirmCertificateAtEdge } from './certificates/confirm-certificate-at-edge';
import { finishCertificateOrder } from './certificates/finish-certificate-order';
import { listCertificatesDue } from './certificates/list-certificates-due';
import { notifyCertificateOwners } from './certificates/notify-certificate-owners';
import { placeCertificateOrder } from './certificates/place-certificate-order';
import { recordCertificateProblem } from './certificates/record-certificate-problem';
import { listUploadsEnding } from './certificates/list-uploads-ending';
import { warnUploadOwners } from './certificates/warn-upload-owners';

export { followSwarmTasks } from './swarm/task-instances';

/**
 * Deploy, scale, undeploy and reconcile activities, each safe to repeat. Only the deployments worker has
 * them. The workflows read the same under either driver (DEPLOY_DRIVER); only these differ.
 */
export function createDeployActivities(deps: DeployDeps) {
  const driver: DeployDriverActivities = deps.config.deploy.driver === 'swarm' ? swarmDriver(deps) : dockerDriver(deps);
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
    recordRestarts: recordRestarts(deps),
    registerCanary: registerCanary(deps),
    shareWithCanary: shareWithCanary(deps),
    readVersionCounters: readVersionCounters(deps),
    judgeCanaryStep: judgeCanaryStep(deps),
    recordRolloutState: recordRolloutState(deps),
    finishRevert: finishRevert(deps),
    removeImage: removeImage(deps),
    pruneServiceImages: pruneServiceImages(deps),
    finishDeployment: finishDeployment(deps),
    failDeployment: failDeployment(deps),
    notifyDeployOwners: notifyDeployOwners(deps),
    setServiceStatus: setServiceStatus(deps),
    readContainerLimits: readContainerLimits(deps),
    applyContainerLimits: applyContainerLimits(deps),
    restoreContainerLimits: restoreContainerLimits(deps),
    recordServiceLimits: recordServiceLimits(deps),
    deregisterService: deregisterService(deps),
    removeServiceImages: removeServiceImages(deps),
    deleteService: deleteService(deps),
    recordJobRun: recordJobRun(deps),
    placeCertificateOrder: placeCertificateOrder(deps),
    awaitCertificateValidation: awaitCertificateValidation(deps),
    finishCertificateOrder: finishCertificateOrder(deps),
    confirmCertificateAtEdge: confirmCertificateAtEdge(deps),
    recordCertificateProblem: recordCertificateProblem(deps),
    notifyCertificateOwners: notifyCertificateOwners(deps),
    listCertificatesDue: listCertificatesDue(deps),
    listUploadsEnding: listUploadsEnding(deps),
    warnUploadOwners: warnUploadOwners(deps),
  };
}

export type DeployActivities = ReturnType<typeof createDeployActivities>;
