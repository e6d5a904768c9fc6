import { INSTANCE_TABLE, SERVICE_TABLE, ServiceRow } from '../../data/deploy/registry';
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
    const service: ServiceRow | undefined = await db(SERVICE_TABLE).where({ name: input.serviceName, dynamic: true }).first();
    if (!service || !['RUNNING', 'DEGRADED'].includes(service.status) || !service.current_deployment_id) return null;
    const instances = await db(INSTANCE_TABLE).where({ service_id: service.id }).whereIn('state', ['HEALTHY', 'DEAD']).orderBy([{ column: 'created_at' }, { column: 'id' }]);
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
    if (dead.length > 0) await db(INSTANCE_TABLE).whereIn('id', dead).update({ state: 'DEAD' });
    await db(INSTANCE_TABLE).whereIn('id', alive).update({ last_health_at: db.fn.now() });
    return { deploymentId: service.current_deployment_id, desired: service.desired_instances, alive, dead };
  };
}
