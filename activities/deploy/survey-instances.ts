import { recordSurvey, serviceToSurvey } from '../../data/deploy/instances';
import { recordHealthSeen, recordServiceEvents } from '../../data/deploy/events';
import { findDeployment, InstanceRow } from '../../data/deploy/registry';
import { probeHealth } from '../../adapters/deploy/health-probe';
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
 * is marked DEAD at once, so the gateway stops routing to it. Each running one's health path is probed once:
 * a change from what the last survey saw becomes an UNHEALTHY or HEALTHY event (the edge's own health check
 * decides the routing; the survey records it for the operator). Null when the service is not running (being
 * deployed, undeployed, or gone): then there is nothing to reconcile.
 */
export function surveyInstances(deps: DeployDeps) {
  const { db, docker } = deps;
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
    await recordHealth(
      deps,
      service.name,
      instances.filter((instance) => alive.includes(instance.id)),
    );
    return { deploymentId: service.current_deployment_id!, desired: service.desired_instances, alive, dead };
  };
}

/** Probes each running instance once on its deployment's health path, together, and records what changed. */
async function recordHealth(deps: DeployDeps, serviceName: string, running: InstanceRow[]): Promise<void> {
  const healthPaths = new Map<string, string | null>();
  for (const deploymentId of new Set(running.map((instance) => instance.deployment_id))) {
    const deployment = await findDeployment(deps.db, deploymentId);
    if (deployment) healthPaths.set(deploymentId, deployment.settings.healthPath);
  }
  await Promise.all(
    running
      .filter((instance) => healthPaths.has(instance.deployment_id) && instance.address)
      .map(async (instance) => {
        const { passing, status, path } = await probeHealth(instance.address, healthPaths.get(instance.deployment_id)!);
        const answered = status === null ? 'nothing answered within 2 s' : `it answered ${status}`;
        await recordHealthSeen(deps.db, {
          serviceName,
          instanceId: instance.id,
          passing,
          detail: passing ? `Its health check of ${path} passes again (${answered}).` : `Its health check of ${path} failed: ${answered}.`,
        });
      }),
  );
}
