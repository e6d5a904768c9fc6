import { LABELS } from '../../../data/deploy/labels';
import { findService } from '../../../data/deploy/registry';
import { StartedInstance } from '../../../domain/deploy';
import { finalFailure } from '../../failures';
import { DeployDeps } from '../deps';
import { settleCanaryService } from './canary-service';
import { findSwarmService, isCanary, requireDeployment, serviceSpecFor, setReplicas } from './swarm-services';
import { names } from './task-instances';

/**
 * Makes the service's swarm service run this deployment (created, or updated as a rolling update) with
 * the service's desired replicas; a canary rollout's deployment runs in a swarm service of its own
 * instead, beside the service's (one a dead run left there is replaced). Repeating it changes nothing.
 * The swarm names its tasks, so no instance is answered here: waitInstancesHealthy answers the tasks.
 */
export function startSwarmInstances(deps: DeployDeps) {
  const { db, docker } = deps;
  return async (input: { deploymentId: string; instanceIds: string[] }): Promise<StartedInstance[]> => {
    const deployment = await requireDeployment(deps, input.deploymentId);
    const service = await findService(db, deployment.service_name);
    if (!service) throw finalFailure('NOT_FOUND', `Service ${deployment.service_name} is not registered.`);
    const canary = isCanary(deployment, service);
    const { swarmService, canaryService } = names(deps, deployment.service_name);
    const name = canary ? canaryService : swarmService;
    const existing = await findSwarmService(docker, name);
    if (existing?.Spec.Labels?.[LABELS.deployment] === deployment.id) {
      await setReplicas(docker, name, service.desired_instances);
      return [];
    }
    const spec = await serviceSpecFor(deps, { deployment, service, canary });
    if (existing && !canary) await docker.getService(existing.ID).update({ ...spec, version: existing.Version.Index });
    else {
      // A canary left from a rollout that ended: handed over if it serves, else gone (settleCanaryService).
      if (existing) await settleCanaryService(deps, service);
      await docker.createService(spec);
    }
    return [];
  };
}
