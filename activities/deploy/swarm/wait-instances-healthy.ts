import { lastLogLines, lastServiceLogLines } from '../../../adapters/deploy/container-logs';
import { labelFilters, LABELS } from '../../../data/deploy/labels';
import { DeploymentRow, findService } from '../../../data/deploy/registry';
import { DEFAULT_HEALTH_PATH, INSTANCE_UNHEALTHY, ROLLED_BACK_BY_SWARM, StartedInstance } from '../../../domain/deploy';
import { maskSecretValues } from '../../../domain/deploy-secrets';
import { finalFailure } from '../../failures';
import { pollUntil } from '../../poll-until';
import { DeployDeps } from '../deps';
import { findSwarmService, isCanary, LOG_LINES_KEPT, POLL_MS, requireDeployment, SWARM_VERDICT_MS } from './swarm-services';
import { names, syncService } from './task-instances';
import { deploymentOfTask, taskFailures, taskStillUp } from './tasks';

/**
 * The last lines the deployment's tasks wrote: the swarm's service logs, which leave out a task still
 * starting (one that never passed its health check); then this node's containers of the deployment.
 */
async function lastTaskLogLines(deps: DeployDeps, args: { swarmService: string; deploymentId: string }): Promise<string[]> {
  const lines = (await lastServiceLogLines(deps.docker, args.swarmService, LOG_LINES_KEPT)).map((line) => line.text);
  if (lines.length > 0) return lines;
  const containers = await deps.docker.listContainers({ all: true, filters: labelFilters(deps.config.deploy.scope, 'deployment', args.deploymentId) });
  const each = await Promise.all(containers.map((container) => lastLogLines(deps.docker, container.Id, LOG_LINES_KEPT)));
  return each.flat().slice(-LOG_LINES_KEPT);
}

type Unhealthy = (reason: string, type?: typeof INSTANCE_UNHEALTHY | typeof ROLLED_BACK_BY_SWARM) => Promise<Error>;

/**
 * Waits until a canary rollout's swarm service runs its desired tasks, each past its health check; the edge
 * routes them to no one until the rollout names them its canary. A failing task fails the run at once, as
 * on a first deploy: there is no earlier version of this swarm service to roll back to, and the service's
 * own has not changed.
 */
function untilCanaryServes(deps: DeployDeps, args: { deployment: DeploymentRow; deadline: number; unhealthy: Unhealthy }): Promise<StartedInstance[]> {
  const { deployment } = args;
  const { canaryService } = names(deps, deployment.service_name);
  const healthPath = deployment.settings.healthPath ?? DEFAULT_HEALTH_PATH;
  return pollUntil(POLL_MS, async () => {
    const canary = await findSwarmService(deps.docker, canaryService);
    if (!canary) throw await args.unhealthy(`The canary's swarm service ${canaryService} is gone.`);
    const { tasks, serving } = await syncService(deps, deployment.service_name);
    const desired = canary.Spec.Mode?.Replicated?.Replicas ?? 0;
    const ours = serving.filter((task) => task.deploymentId === deployment.id);
    if (ours.length >= desired) return ours;
    const failures = taskFailures(tasks, { deploymentId: deployment.id, healthPath });
    if (failures.length > 0) throw await args.unhealthy(`${failures.join('; ')}.`);
    if (Date.now() >= args.deadline + SWARM_VERDICT_MS)
      throw await args.unhealthy(`The health check of ${healthPath} did not pass before the deadline (${ours.length} of ${desired} canary tasks serving).`);
    return undefined;
  });
}

/**
 * Waits until the swarm runs the deployment's desired tasks, each past its health check, and the rolling
 * update (if any) completed. Meanwhile the registry follows the tasks, so the edge routes to each new task as
 * it passes and lets go of each old one as the swarm stops it. A rollback by the swarm, a failing task of a
 * first deploy, or the deadline fails the run for good with the tasks' reasons and last log lines; the
 * swarm's rollback has left the previous version serving.
 */
export function waitSwarmInstancesHealthy(deps: DeployDeps) {
  return async (input: { deploymentId: string; instances: StartedInstance[]; deadline: string }): Promise<StartedInstance[]> => {
    const deployment = await requireDeployment(deps, input.deploymentId);
    const { swarmService, canaryService } = names(deps, deployment.service_name);
    const registered = await findService(deps.db, deployment.service_name);
    const canary = isCanary(deployment, registered);
    const unhealthy: Unhealthy = async (reason, type = INSTANCE_UNHEALTHY) => {
      const lines = await lastTaskLogLines(deps, { swarmService: canary ? canaryService : swarmService, deploymentId: deployment.id }).catch(() => []);
      return finalFailure(type, reason, [{ lastLogLines: lines.map((line) => maskSecretValues(line, deployment.settings.env)) }]);
    };
    const deadline = Date.parse(input.deadline);
    const healthPath = deployment.settings.healthPath ?? DEFAULT_HEALTH_PATH;
    if (canary) return untilCanaryServes(deps, { deployment, deadline, unhealthy });
    // A new version (not a scale of the serving one): the swarm's rollback puts the previous spec back.
    const newVersion = registered?.current_deployment_id !== deployment.id;
    return pollUntil(POLL_MS, async () => {
      const service = await findSwarmService(deps.docker, swarmService);
      if (!service) throw await unhealthy(`The swarm service ${swarmService} is gone.`);
      const { tasks, serving } = await syncService(deps, deployment.service_name);
      const firstVersion = newVersion && !service.PreviousSpec;
      const update = service.UpdateStatus?.State;
      if (newVersion && service.Spec.Labels?.[LABELS.deployment] !== deployment.id) {
        const reasons = [service.UpdateStatus?.Message, ...taskFailures(tasks, { deploymentId: deployment.id, healthPath })].filter(Boolean).join('; ');
        throw await unhealthy(`The swarm rolled the update back: the new tasks did not pass their health check (${reasons}).`, ROLLED_BACK_BY_SWARM);
      }
      const desired = service.Spec.Mode?.Replicated?.Replicas ?? 0;
      const ours = serving.filter((task) => task.deploymentId === deployment.id);
      // An update status left from an earlier update (a rollback) is not this one's: wait for this one to complete.
      const settled = !newVersion || update === undefined || update === 'completed';
      // And the tasks it replaced have ended their drain window: as under the docker driver, whose deploy
      // removes the replaced containers before it closes, nothing of another version still runs.
      const replacedStillUp = tasks.some((task) => deploymentOfTask(task) !== deployment.id && taskStillUp(task));
      if (settled && ours.length >= desired && !replacedStillUp) return ours;
      const failures = taskFailures(tasks, { deploymentId: deployment.id, healthPath });
      // A first deploy has no rollback to wait for: its failing task fails it, as a container exiting does under the docker driver.
      // A task of the serving version that died (a scale, a reconcile) is the swarm's to replace.
      if (firstVersion && failures.length > 0) throw await unhealthy(`${failures.join('; ')}.`);
      if (Date.now() >= deadline + SWARM_VERDICT_MS) {
        const also = failures.length ? `; ${failures.join('; ')}` : '';
        throw await unhealthy(`The health check of ${healthPath} did not pass before the deadline (${ours.length} of ${desired} tasks serving${also}).`);
      }
      return undefined;
    });
  };
}
