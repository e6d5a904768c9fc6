import { pollUntil } from '../poll-until';
import { lastLogLines } from '../../adapters/deploy/container-logs';
import { maskSecretValues } from '../../domain/deploy-secrets';
import { probeHealth } from '../../adapters/deploy/health-probe';
import { recordServiceEvents } from '../../data/deploy/events';
import { DeploymentRow, findDeployment } from '../../data/deploy/registry';
import { INSTANCE_UNHEALTHY, StartedInstance } from '../../domain/deploy';
import { DeployDeps } from './deps';
import { finalFailure } from '../failures';

const LOG_LINES_KEPT = 30;
// The health path is probed every 20 ms for the first two seconds: each wait rounds a deploy up to the next
// probe (a 500 ms pace cost a quarter of a second on average, 100 ms still 50 ms), and a probe of a JVM not
// listening yet is refused at once. A service slower to start is probed every 100 ms from then on. The engine
// is asked whether the container still runs about every half second.
const QUICK_POLL_MS = 20;
const QUICK_PROBES_MS = 2000;
const POLL_MS = 100;
const INSPECT_EVERY_MS = 500;

/**
 * Polls a new instance until its health path answers 2xx (or, with the default path, until anything answers
 * HTTP), up to the deadline the workflow fixed, so a retry after a worker crash keeps the same deadline.
 * A container that exits, or a deadline that passes, fails for good with the container's last log lines.
 */
export function waitInstancesHealthy(deps: DeployDeps) {
  const untilHealthy = untilContainerHealthy(deps);
  return async (input: { deploymentId: string; instances: StartedInstance[]; deadline: string }): Promise<StartedInstance[]> => {
    const deployment = await findDeployment(deps.db, input.deploymentId);
    if (!deployment) throw finalFailure('NOT_FOUND', `No deployment ${input.deploymentId}.`);
    await Promise.all(input.instances.map((instance) => untilHealthy(deployment, instance, input.deadline)));
    return input.instances;
  };
}

/** One instance per activity: what deploy runs started before INSTANCES_AS_ONE_STEP still call. */
export function waitUntilHealthy(deps: DeployDeps) {
  const untilHealthy = untilContainerHealthy(deps);
  return async (input: { deploymentId: string; instance: StartedInstance; deadline: string }): Promise<{ healthyAt: string }> => {
    const deployment = await findDeployment(deps.db, input.deploymentId);
    if (!deployment) throw finalFailure('NOT_FOUND', `No deployment ${input.deploymentId}.`);
    await untilHealthy(deployment, input.instance, input.deadline);
    return { healthyAt: new Date().toISOString() };
  };
}

function untilContainerHealthy(deps: DeployDeps) {
  const { docker } = deps;
  return async (deployment: DeploymentRow, instance: StartedInstance, deadlineAt: string): Promise<void> => {
    const { healthPath, env } = deployment.settings;
    const container = docker.getContainer(instance.containerId);
    const unhealthy = async (reason: string) => {
      const lines = await lastLogLines(docker, instance.containerId, LOG_LINES_KEPT).catch(() => []);
      return finalFailure(INSTANCE_UNHEALTHY, reason, [{ lastLogLines: lines.map((line) => maskSecretValues(line, env)) }]);
    };
    const deadline = Date.parse(deadlineAt);
    const failIfExited = async () => {
      const state = (await container.inspect()).State;
      if (!state.Running) throw await unhealthy(`The container exited with code ${state.ExitCode} before it became healthy.`);
    };
    const started = Date.now();
    let inspectedAt = 0;
    await pollUntil(
      () => (Date.now() - started < QUICK_PROBES_MS ? QUICK_POLL_MS : POLL_MS),
      async () => {
        if (Date.now() - inspectedAt >= INSPECT_EVERY_MS) {
          await failIfExited();
          inspectedAt = Date.now();
        }
        const { passing, status, path } = await probeHealth(instance.address, healthPath);
        if (passing) {
          await recordServiceEvents(deps.db, deployment.service_name, [
            {
              kind: 'HEALTHY',
              instanceId: instance.instanceId,
              detail: `Passed its health check (${path} answered ${status}).`,
              dedupeKey: `healthy:${instance.instanceId}`,
            },
          ]);
          return true;
        }
        if (Date.now() >= deadline) {
          await failIfExited();
          const answered = status === null ? 'nothing answered' : `it answered ${status}`;
          throw await unhealthy(`The health check of ${path} did not pass before the deadline (${answered}).`);
        }
        return undefined;
      },
    );
  };
}
