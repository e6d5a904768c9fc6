import { serviceToSurvey } from '../../../data/deploy/instances';
import { DeployDeps } from '../deps';
import { settleCanaryService } from './canary-service';
import { syncService } from './task-instances';

/** Makes the registry match what the swarm reports: instances whose tasks stopped leave (the swarm starts others). */
export function surveySwarmInstances(deps: DeployDeps) {
  return async (input: { serviceName: string }) => {
    const surveyed = await serviceToSurvey(deps.db, input.serviceName);
    if (!surveyed) return null;
    const { service } = surveyed;
    await settleCanaryService(deps, service);
    const { serving, left } = await syncService(deps, service.name);
    const alive = serving.filter((task) => task.deploymentId === service.current_deployment_id).map((task) => task.instanceId);
    return { deploymentId: service.current_deployment_id!, desired: service.desired_instances, alive, dead: left };
  };
}
