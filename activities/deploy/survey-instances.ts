import { recordSurvey, serviceToSurvey } from '../../data/deploy/instances';
import { DeployDeps } from './deps';
import { isGone } from './docker-errors';

export interface InstanceSurvey {
  deploymentId: string;
  desired: number;
  /** Healthy instances whose containers run, oldest first. */
  alive: string[];
  /** Instances whose containers died or vanished; the gateway no longer routes to them. */
  dead: string[];
}

/**
 * Compares the registry with the engine for one service: an instance whose container stopped or vanished
 * is marked DEAD at once, so the gateway stops routing to it. Null when the service is not running (being
 * deployed, undeployed, or gone): then there is nothing to reconcile.
 */
export function surveyInstances({ db, docker }: DeployDeps) {
  return async (input: { serviceName: string }): Promise<InstanceSurvey | null> => {
    const surveyed = await serviceToSurvey(db, input.serviceName);
    if (!surveyed) return null;
    const { service, instances } = surveyed;
    const alive: string[] = [];
    const dead: string[] = [];
    for (const instance of instances) {
      let running = false;
      if (instance.state === 'HEALTHY') {
        try {
          running = (await docker.getContainer(instance.container_id).inspect()).State.Running;
        } catch (error) {
          if (!isGone(error)) throw error;
        }
      }
      (running ? alive : dead).push(instance.id);
    }
    await recordSurvey(db, { alive, dead });
    return { deploymentId: service.current_deployment_id!, desired: service.desired_instances, alive, dead };
  };
}
