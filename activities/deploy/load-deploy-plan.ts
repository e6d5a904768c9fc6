import { hadSuccessfulDeployBefore, liveInstanceIds } from '../../data/deploy/instances';
import { DeploymentRow, findDeployment, findService } from '../../data/deploy/registry';
import { DeployDeps } from './deps';
import { finalFailure } from '../failures';
import { RolloutPlan } from '../../domain/deploy';

export interface DeployPlan {
  serviceName: string;
  image: string;
  buildFromJar: boolean;
  instances: number;
  /** No earlier deploy of this service reached RUNNING: a failure removes the registry row too. */
  firstDeploy: boolean;
  /** Set for services bound to a host port: their old instances must stop before new ones can bind. */
  hostPort: number | null;
  /** Instances serving now (replaced by this deploy). */
  currentInstanceIds: string[];
  /** The deployment serving now, if any: what a failed host-port redeploy brings back. */
  currentDeploymentId?: string | null;
  /** A canary rollout asked for with this redeploy; absent otherwise (and in runs from before rollouts). */
  rollout?: RolloutPlan;
}

/** Reads what a deploy will do from its row; the workflow carries only ids, never env values. */
export function loadDeployPlan({ db }: DeployDeps) {
  return async (input: { deploymentId: string }): Promise<DeployPlan> => {
    const deployment: DeploymentRow | undefined = await findDeployment(db, input.deploymentId);
    if (!deployment) throw finalFailure('NOT_FOUND', `No deployment ${input.deploymentId}.`);
    const service = await findService(db, deployment.service_name);
    if (!service) throw finalFailure('NOT_FOUND', `Service ${deployment.service_name} is not registered.`);
    const earlier = await hadSuccessfulDeployBefore(db, { serviceName: deployment.service_name, seq: deployment.seq });
    const current = await liveInstanceIds(db, service.id);
    return {
      serviceName: deployment.service_name,
      image: deployment.image,
      buildFromJar: deployment.build_from_jar,
      instances: service.desired_instances,
      firstDeploy: !earlier,
      hostPort: deployment.settings.hostPort,
      currentInstanceIds: current,
      currentDeploymentId: service.current_deployment_id,
      ...(deployment.rollout ? { rollout: deployment.rollout } : {}),
    };
  };
}
