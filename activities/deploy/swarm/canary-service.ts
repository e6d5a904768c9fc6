import { Context } from '@temporalio/activity';
import { DeploymentRow, findDeployment, ServiceRow } from '../../../data/deploy/registry';
import { LABELS } from '../../../data/deploy/labels';
import { retireCanary as retireCanaryRow } from '../../../data/deploy/rollouts';
import { INSTANCE_UNHEALTHY, ROLLED_BACK_BY_SWARM } from '../../../domain/deploy';
import { finalFailure, retryableFailure } from '../../failures';
import { pollUntil } from '../../poll-until';
import { DeployDeps } from '../deps';
import { findSwarmService, POLL_MS, removeSwarmService, serviceSpecFor, STOPPED_WITHIN_MS } from './swarm-services';
import { names, syncService } from './task-instances';
import { deploymentOfTask, tasksOf, taskStillUp } from './tasks';

/**
 * How long one attempt of a hand-over may wait for the service's own swarm service to roll, at most: its
 * activity's own time less what the canary's removal may take after it (STOPPED_WITHIN_MS plus a margin), so
 * that attempts never overlap. The next attempt keeps waiting.
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
export async function handOverFromCanary(deps: DeployDeps, args: { deployment: DeploymentRow; service: ServiceRow }): Promise<void> {
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
  await pollUntil(POLL_MS, async () => {
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
    if ((update === undefined || update === 'completed') && ours.length >= service.desired_instances && !othersUp) return true;
    if (Date.now() > deadline)
      throw retryableFailure(INSTANCE_UNHEALTHY, `${swarmService} runs ${ours.length} of ${service.desired_instances} tasks of the promoted version so far.`);
    return undefined;
  });
  await removeSwarmService(docker, canaryService);
  await syncService(deps, deployment.service_name);
}

/**
 * A canary swarm service left from a rollout that ended: a promoted one whose hand-over did not finish is
 * handed over (and its cluster retired); one of a rollout that ended otherwise (reverted, failed, its run
 * dead and settled) goes. One whose deploy is still open is left to its run to keep or withdraw.
 */
export async function settleCanaryService(deps: DeployDeps, service: ServiceRow): Promise<void> {
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
