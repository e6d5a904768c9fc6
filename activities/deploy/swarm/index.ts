import { Context, log, sleep } from '@temporalio/activity';
import { deleteInstanceRows, instanceAddressesByService, orphanInstanceIds, serviceToSurvey } from '../../../data/deploy/instances';
import { LABELS, labelFilters, serviceFilters } from '../../../data/deploy/labels';
import { DeploymentRow, findDeployment, findService } from '../../../data/deploy/registry';
import { lastLogLines, lastServiceLogLines } from '../../../adapters/deploy/container-logs';
import { maskSecretValues } from '../../../domain/deploy-secrets';
import { DEFAULT_HEALTH_PATH, INSTANCE_UNHEALTHY, ROLLED_BACK_BY_SWARM, StartedInstance } from '../../../domain/deploy';
import type { DeployDriverActivities } from '../docker-driver';
import { DeployDeps } from '../deps';
import { isGone } from '../docker-errors';
import { listReconcilableServices } from '../list-reconcilable-services';
import { prepareServiceNetwork, removeServiceNetwork } from '../service-network';
import { names, syncService } from './task-instances';
import { deploymentOfTask, taskFailures, tasksOf, taskStillUp } from './tasks';
import { finalFailure, retryableFailure } from '../../failures';
import { retireCanary as retireCanaryRow } from '../../../data/deploy/rollouts';
import { ServiceRow } from '../../../data/deploy/registry';
import {
  POLL_MS,
  SWARM_VERDICT_MS,
  LOG_LINES_KEPT,
  findSwarmService,
  serviceSpecFor,
  removeSwarmService,
  isCanary,
  requireDeployment,
  setReplicas,
  STOPPED_WITHIN_MS,
  untilExtraTasksStopped,
} from './swarm-services';

/**
 * The last lines the deployment's tasks wrote: the swarm's service logs, which leave out a task still
 * starting (one that never passed its health check); then this node's containers of the deployment.
 */
async function lastTaskLogLines(deps: DeployDeps, args: { swarmService: string; deploymentId: string }): Promise<string[]> {
  const lines = (await lastServiceLogLines(deps.docker, args.swarmService, LOG_LINES_KEPT)).map((line) => line.text);
  if (lines.length > 0) return lines;
  const containers = await deps.docker.listContainers({ all: true, filters: labelFilters(deps.config.deployScope, 'deployment', args.deploymentId) });
  const each = await Promise.all(containers.map((container) => lastLogLines(deps.docker, container.Id, LOG_LINES_KEPT)));
  return each.flat().slice(-LOG_LINES_KEPT);
}

/**
 * Waits until a canary rollout's swarm service runs its desired tasks, each past its health check; the edge
 * routes them to no one until the rollout names them its canary. A failing task fails the run at once, as
 * on a first deploy: there is no earlier version of this swarm service to roll back to, and the service's
 * own has not changed.
 */
async function untilCanaryServes(
  deps: DeployDeps,
  args: { deployment: DeploymentRow; deadline: number; unhealthy: (reason: string) => Promise<Error> },
): Promise<StartedInstance[]> {
  const { deployment } = args;
  const { canaryService } = names(deps, deployment.service_name);
  const healthPath = deployment.settings.healthPath ?? DEFAULT_HEALTH_PATH;
  for (let attempt = 1; ; attempt++) {
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
    Context.current().heartbeat({ attempt });
    await sleep(POLL_MS);
  }
}

/**
 * How long one attempt of a hand-over may wait for the service's own swarm service to roll, at most: its
 * activity's own time less what the canary's removal may take after it (STOPPED_WITHIN_MS and some), so that
 * attempts never overlap. The next attempt waits on.
 */
const HAND_OVER_WAIT_MAX_MS = 45000;
const handOverWaitMs = () => {
  const { startToCloseTimeoutMs } = Context.current().info;
  return Math.max(5000, Math.min(HAND_OVER_WAIT_MAX_MS, startToCloseTimeoutMs - STOPPED_WITHIN_MS - 5000));
};

/**
 * A promoted canary hands its place back to the service's own swarm service. That rolls to the canary's
 * version as any swarm update does (one task at a time, each new one healthy before an old one stops; the old
 * ones took no requests since the switch); once it runs every desired task of that version, the canary's
 * swarm service goes, its tasks leaving the edge as the swarm stops them, within their drain window. The
 * canary serves throughout. Repeating it changes nothing; an attempt that runs out of time leaves the next
 * one to wait on.
 */
async function handOverFromCanary(deps: DeployDeps, args: { deployment: DeploymentRow; service: ServiceRow }): Promise<void> {
  const { docker } = deps;
  const { deployment, service } = args;
  const { swarmService, canaryService } = names(deps, deployment.service_name);
  const own = await findSwarmService(docker, swarmService);
  if (own?.Spec.Labels?.[LABELS.deployment] !== deployment.id) {
    const spec = await serviceSpecFor(deps, { deployment, service, canary: false });
    if (own) await docker.getService(own.ID).update({ ...spec, version: own.Version.Index });
    else await docker.createService(spec);
  }
  const deadline = Date.now() + handOverWaitMs();
  for (let attempt = 1; ; attempt++) {
    const rolled = await findSwarmService(docker, swarmService);
    // The swarm's rollback puts the previous spec back. (An update status left from an earlier update, a
    // rollback among them, is not this one's: the update below waits for this one to complete.)
    const update = rolled?.UpdateStatus?.State;
    if (!rolled || rolled.Spec.Labels?.[LABELS.deployment] !== deployment.id)
      throw finalFailure(
        ROLLED_BACK_BY_SWARM,
        `The swarm rolled ${swarmService} back from the promoted version (${rolled?.UpdateStatus?.Message ?? 'it is gone'}); the canary's tasks keep serving it.`,
      );
    const tasks = await tasksOf(docker, swarmService);
    const ours = tasks.filter((task) => deploymentOfTask(task) === deployment.id && task.Status.State === 'running' && task.DesiredState === 'running');
    const othersUp = tasks.some((task) => deploymentOfTask(task) !== deployment.id && taskStillUp(task));
    if ((update === undefined || update === 'completed') && ours.length >= service.desired_instances && !othersUp) break;
    if (Date.now() > deadline)
      throw retryableFailure(INSTANCE_UNHEALTHY, `${swarmService} runs ${ours.length} of ${service.desired_instances} tasks of the promoted version so far.`);
    Context.current().heartbeat({ attempt });
    await sleep(POLL_MS);
  }
  await removeSwarmService(docker, canaryService);
  await syncService(deps, deployment.service_name);
}

/**
 * A canary swarm service left from a rollout that ended: a promoted one whose hand-over did not finish is
 * handed over (and its cluster retired); one of a rollout that ended otherwise (reverted, failed, its run
 * dead and settled) goes. One whose deploy is still open is its run's to keep or withdraw, never this.
 */
async function settleCanaryService(deps: DeployDeps, service: ServiceRow): Promise<void> {
  const { canaryService } = names(deps, service.name);
  const canary = await findSwarmService(deps.docker, canaryService);
  if (!canary) return;
  const deploymentId = canary.Spec.Labels?.[LABELS.deployment];
  const deployment = deploymentId ? await findDeployment(deps.db, deploymentId) : undefined;
  if (deployment?.status === 'DEPLOYING') return;
  if (deployment && deployment.id === service.current_deployment_id) {
    await handOverFromCanary(deps, { deployment, service });
    await retireCanaryRow(deps.db, { deploymentId: deployment.id });
  } else await removeSwarmService(deps.docker, canaryService);
}

/**
 * Takes back a deployment that is not serving (a deploy that failed, or whose run died): a swarm service
 * still on it goes back to the version before it (the swarm's rollback), or, on a first deploy, away. One
 * the swarm already rolled back, or one serving this deployment (a scale), is left as it is.
 */
async function withdrawDeployment(deps: DeployDeps, deploymentId: string): Promise<void> {
  const deployment = await requireDeployment(deps, deploymentId);
  const service = await findService(deps.db, deployment.service_name);
  const { swarmService, canaryService } = names(deps, deployment.service_name);
  // A canary rollout's version ran in a swarm service of its own: withdrawn, it goes.
  const canary = await findSwarmService(deps.docker, canaryService);
  if (canary && canary.Spec.Labels?.[LABELS.deployment] === deployment.id && service?.current_deployment_id !== deployment.id)
    await removeSwarmService(deps.docker, canaryService);
  const existing = await findSwarmService(deps.docker, swarmService);
  if (existing && existing.Spec.Labels?.[LABELS.deployment] === deployment.id && service?.current_deployment_id !== deployment.id) {
    if (existing.PreviousSpec) await deps.docker.getService(existing.ID).update({ ...existing.Spec, version: existing.Version.Index, rollback: 'previous' });
    // The swarm removes the tasks' containers after it forgets the service: the undo ends when they are gone.
    else await removeSwarmService(deps.docker, swarmService);
  }
  await syncService(deps, deployment.service_name);
}

/**
 * The swarm driver: each deployed service is one swarm service whose tasks the swarm places on its nodes,
 * restarts, and rolls from one version to the next. The registry's instances are the tasks that serve,
 * kept in step from the swarm's task list; the edge routes to their own addresses on the service's overlay.
 */
export function swarmDriver(deps: DeployDeps): DeployDriverActivities {
  const { db, docker, config } = deps;
  return {
    prepareServiceNetwork: prepareServiceNetwork(deps, 'overlay'),
    /**
     * Makes the service's swarm service run this deployment (created, or updated as a rolling update) with
     * the service's desired replicas; a canary rollout's deployment runs in a swarm service of its own
     * instead, beside the service's (one a dead run left there is replaced). Repeating it changes nothing.
     * The swarm names its tasks, so no instance is answered here: waitInstancesHealthy answers the tasks.
     */
    startInstances: async (input: { deploymentId: string; instanceIds: string[] }): Promise<StartedInstance[]> => {
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
    },

    /**
     * Waits until the swarm runs the deployment's desired tasks, each past its health check, and the
     * rolling update (if any) completed. Meanwhile the registry follows the tasks, so the edge routes to
     * each new task as it passes and lets go of each old one as the swarm stops it. A rollback by the swarm,
     * a failing task of a first deploy, or the deadline fails the run for good with the tasks' reasons and
     * last log lines; the swarm's rollback has left the previous version serving.
     */
    waitInstancesHealthy: async (input: { deploymentId: string; instances: StartedInstance[]; deadline: string }): Promise<StartedInstance[]> => {
      const deployment = await requireDeployment(deps, input.deploymentId);
      const { swarmService, canaryService } = names(deps, deployment.service_name);
      const registered = await findService(db, deployment.service_name);
      const canary = isCanary(deployment, registered);
      const unhealthy = async (reason: string, type: typeof INSTANCE_UNHEALTHY | typeof ROLLED_BACK_BY_SWARM = INSTANCE_UNHEALTHY) => {
        const lines = await lastTaskLogLines(deps, { swarmService: canary ? canaryService : swarmService, deploymentId: deployment.id }).catch(() => []);
        return finalFailure(type, reason, [{ lastLogLines: lines.map((line) => maskSecretValues(line, deployment.settings.env)) }]);
      };
      const deadline = Date.parse(input.deadline);
      const healthPath = deployment.settings.healthPath ?? DEFAULT_HEALTH_PATH;
      if (canary) return untilCanaryServes(deps, { deployment, deadline, unhealthy });
      const serving = registered?.current_deployment_id;
      for (let attempt = 1; ; attempt++) {
        const service = await findSwarmService(docker, swarmService);
        if (!service) throw await unhealthy(`The swarm service ${swarmService} is gone.`);
        const { tasks, serving: servingTasks } = await syncService(deps, deployment.service_name);
        // A new version (not a scale of the serving one): the swarm's rollback puts the previous spec back.
        const newVersion = serving !== deployment.id;
        const firstVersion = newVersion && !service.PreviousSpec;
        const update = service.UpdateStatus?.State;
        if (newVersion && service.Spec.Labels?.[LABELS.deployment] !== deployment.id) {
          const reasons = [service.UpdateStatus?.Message, ...taskFailures(tasks, { deploymentId: deployment.id, healthPath })].filter(Boolean).join('; ');
          throw await unhealthy(`The swarm rolled the update back: the new tasks did not pass their health check (${reasons}).`, ROLLED_BACK_BY_SWARM);
        }
        const desired = service.Spec.Mode?.Replicated?.Replicas ?? 0;
        const ours = servingTasks.filter((task) => task.deploymentId === deployment.id);
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
          throw await unhealthy(
            `The health check of ${healthPath} did not pass before the deadline (${ours.length} of ${desired} tasks serving${failures.length ? `; ${failures.join('; ')}` : ''}).`,
          );
        }
        Context.current().heartbeat({ attempt });
        await sleep(POLL_MS);
      }
    },

    /** The undo of a deploy that failed: see withdrawDeployment. */
    withdrawInstances: (input: { deploymentId: string; instanceIds: string[] }) => withdrawDeployment(deps, input.deploymentId),

    listReconcilableServices: listReconcilableServices(deps, (deploymentId) => withdrawDeployment(deps, deploymentId)),

    /** The registry made what the swarm reports: instances whose tasks stopped leave (the swarm starts others). */
    surveyInstances: async (input: { serviceName: string }) => {
      const surveyed = await serviceToSurvey(db, input.serviceName);
      if (!surveyed) return null;
      const { service } = surveyed;
      await settleCanaryService(deps, service);
      const { serving, left } = await syncService(deps, service.name);
      const alive = serving.filter((task) => task.deploymentId === service.current_deployment_id).map((task) => task.instanceId);
      return { deploymentId: service.current_deployment_id!, desired: service.desired_instances, alive, dead: left };
    },

    /**
     * A scale down under the swarm: the swarm picks which tasks stop, so no instance is drained ahead of it.
     * Each task it stops keeps serving through its drain window while the edge lets go of it (the task list
     * is followed twice a second): nothing is taken out of the edge that the swarm then keeps running.
     */
    drainInstances: async () => undefined,

    /**
     * Sets the swarm service to the service's desired count and waits until the extra tasks have stopped;
     * the registry then follows the tasks (instances whose tasks stopped, the ones asked for or not, leave it).
     */
    removeInstances: async (input: { instanceIds: string[] }): Promise<void> => {
      if (input.instanceIds.length === 0) return;
      for (const serviceName of (await instanceAddressesByService(db, input.instanceIds)).keys()) {
        const service = await findService(db, serviceName);
        if (!service) continue;
        const { swarmService } = names(deps, serviceName);
        await setReplicas(docker, swarmService, service.desired_instances);
        await untilExtraTasksStopped(docker, swarmService, service.desired_instances);
        await syncService(deps, serviceName);
      }
    },

    /**
     * Rows a dead run left of deployments neither serving nor starting now, and a canary swarm service it left;
     * the service's own swarm service is updated by the deploy.
     */
    removeOrphanInstances: async (input: { serviceName: string; deploymentId: string }) => {
      const service = await findService(db, input.serviceName);
      if (!service) return { removed: 0 };
      // A canary swarm service a dead run left would hold this deploy's update back (its tasks still run).
      await settleCanaryService(deps, service);
      const keep = [input.deploymentId, ...(service.current_deployment_id ? [service.current_deployment_id] : [])];
      const orphans = await orphanInstanceIds(db, { serviceId: service.id, keep });
      await deleteInstanceRows(db, orphans);
      return { removed: orphans.length };
    },

    /** Removes the swarm service, waits until its tasks' containers on this node are gone, then its overlay. */
    removeServiceContainers: async (input: { serviceName: string }) => {
      const { swarmService, canaryService } = names(deps, input.serviceName);
      await removeSwarmService(docker, canaryService);
      const existing = await findSwarmService(docker, swarmService);
      const removed = existing ? (await tasksOf(docker, swarmService)).filter((task) => task.DesiredState === 'running').length : 0;
      if (existing)
        await docker
          .getService(existing.ID)
          .remove()
          .catch((error) => (isGone(error) ? undefined : Promise.reject(error)));
      for (
        let attempt = 1;
        (await docker.listContainers({ all: true, filters: serviceFilters(config.deployScope, input.serviceName) })).length > 0;
        attempt++
      ) {
        Context.current().heartbeat({ attempt });
        await sleep(POLL_MS);
      }
      try {
        await removeServiceNetwork(docker, { network: config.deployNetwork, serviceName: input.serviceName, attach: config.deployAttachContainers });
      } catch (error) {
        // A task on another node may still hold the overlay for a moment; the network is empty, and harmless.
        log.warn(`the overlay of ${input.serviceName} is not removed yet`, { reason: (error as Error).message });
      }
      return { removed };
    },

    /**
     * The promoted canary's swarm service hands its place back to the service's own (handOverFromCanary), then
     * its cluster goes, as under the docker driver.
     */
    retireCanary: async (input: { deploymentId: string }): Promise<void> => {
      const deployment = await requireDeployment(deps, input.deploymentId);
      const service = await findService(db, deployment.service_name);
      if (service?.current_deployment_id === deployment.id) await handOverFromCanary(deps, { deployment, service });
      await retireCanaryRow(db, input);
    },
  };
}
