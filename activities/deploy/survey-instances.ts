import { recordSurvey, serviceToSurvey } from '../../data/deploy/instances';
import { recordServiceEvents } from '../../data/deploy/events';
import { ServiceEvent } from '../../domain/deploy';
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
    const oomKilled: string[] = [];
    const events: ServiceEvent[] = [];
    for (const instance of instances) {
      let running = false;
      if (instance.state === 'HEALTHY') {
        try {
          const { State } = await docker.getContainer(instance.container_id).inspect();
          running = State.Running;
          if (!running && State.OOMKilled) {
            oomKilled.push(instance.id);
            events.push({
              kind: 'OOM_KILLED',
              instanceId: instance.id,
              detail: `Killed by the kernel for using more than its memory limit (exit code ${State.ExitCode}, at ${State.FinishedAt}).`,
              dedupeKey: `oom:${instance.id}`,
            });
          } else if (!running) {
            events.push({
              kind: 'EXITED',
              instanceId: instance.id,
              detail: `Exited with code ${State.ExitCode} at ${State.FinishedAt}.`,
              dedupeKey: `exit:${instance.id}`,
            });
          }
        } catch (error) {
          if (!isGone(error)) throw error;
          events.push({ kind: 'EXITED', instanceId: instance.id, detail: 'Its container is gone from the engine.', dedupeKey: `exit:${instance.id}` });
        }
      } else if (instance.state === 'OOM_KILLED') {
        oomKilled.push(instance.id);
      }
      (running ? alive : dead).push(instance.id);
    }
    await recordServiceEvents(db, service.name, events);
    await recordSurvey(db, { alive, dead, oomKilled });
    return { deploymentId: service.current_deployment_id!, desired: service.desired_instances, alive, dead };
  };
}
