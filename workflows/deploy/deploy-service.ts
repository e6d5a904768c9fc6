import * as wf from '@temporalio/workflow';
import { alongside, deployActivities, failureOf, restoreInstances, startInstances, Undo, waitAllHealthy } from './activities';
import { DeployStage } from '../../domain/deploy';
import { DeployProgress, deployProgressQuery, DeployServiceInput } from './definitions';
import { deployInputProblem, ROLLED_BACK_BY_SWARM } from '../../domain/deploy';
import { refuseInvalidInput } from '../valid-input';
import { runCanary } from './rollout';
import { startEmailBatch } from '../messaging/start-email-batch';

/** Runs started before these markers did not remove a dead run's leftovers first, nor undo a host-port redeploy's stop. */
export const ORPHANS_REMOVED_FIRST = 'deploy-orphans-removed-first';
export const HOST_PORT_REDEPLOY_RESTORES = 'deploy-host-port-redeploy-restores';
/** Runs started before this marker told nobody of a deploy that failed, reverted or was rolled back. */
export const DEPLOY_NOTICES = 'deploy-notices';
/**
 * Runs started before this marker did every step after the one before. From it on, steps that do not wait
 * for each other run at once: a dead run's leftovers go while the plan loads, the service's network is
 * made while its image is built (a first deploy's undo removes it), and BUILDING_IMAGE, STARTING and
 * HEALTH_CHECK are recorded while their steps run.
 */
export const STEPS_OVERLAP = 'deploy-steps-overlap';

/**
 * Tells the service's owners how its deploy ended: writes the notice's emails, and hands them to the messaging
 * worker as a batch of their own. A notice that cannot be sent is logged; it never changes how the deploy ended.
 */
async function tellOwners(act: ReturnType<typeof deployActivities>, deploymentId: string): Promise<void> {
  if (!wf.patched(DEPLOY_NOTICES)) return;
  try {
    const batchId = wf.uuid4();
    const recipients = await act.notifyDeployOwners({ batchId, deploymentId });
    if (recipients === 0) return;
    await startEmailBatch(batchId);
  } catch (error) {
    wf.log.warn("the deploy's notice to the service's owners was not sent", { reason: failureOf(error).reason });
  }
}

/**
 * Deploys a service (first deploy, redeploy or rollback) as a saga: build the image (JAR deploys), start
 * the instances, wait for their health check, switch the gateway to them, then stop the instances they
 * replace once those have drained. Any failure undoes what this run created, newest first; a service
 * that was running before keeps serving its previous version.
 */
export async function deployService(input: DeployServiceInput): Promise<DeployProgress> {
  refuseInvalidInput(deployInputProblem(input));
  const act = deployActivities(input);
  const progress: DeployProgress = {
    deploymentId: input.deploymentId,
    serviceName: input.serviceName,
    stage: 'VALIDATED',
    status: 'DEPLOYING',
    events: [],
    error: null,
  };
  wf.setHandler(deployProgressQuery, () => progress);

  const overlap = wf.patched(STEPS_OVERLAP);
  const enter = async (stage: DeployStage, message: string) => {
    const at = new Date().toISOString();
    progress.stage = stage;
    progress.events.push({ at, stage, message });
    await act.recordDeployStage({ deploymentId: input.deploymentId, stage, message, at });
  };
  /** Enters `stage` and runs its step: once recorded, or (STEPS_OVERLAP) while it is recorded. */
  const during = async <T>(stage: DeployStage, message: string, step: () => Promise<T>): Promise<T> => {
    if (overlap) return alongside(enter(stage, message), step());
    await enter(stage, message);
    return step();
  };
  // A run of this service that died unfinished (terminated from the Web UI, say) could not clean up.
  const removeOrphans = () => act.removeOrphanInstances({ serviceName: input.serviceName, deploymentId: input.deploymentId });

  const undo = new Undo();
  try {
    const plan = overlap
      ? await alongside(removeOrphans(), act.loadDeployPlan({ deploymentId: input.deploymentId }))
      : await act.loadDeployPlan({ deploymentId: input.deploymentId });
    if (!overlap && wf.patched(ORPHANS_REMOVED_FIRST)) await removeOrphans();
    const build = () => {
      undo.push(() => act.removeImage({ image: plan.image }));
      return act.buildServiceImage({ deploymentId: input.deploymentId });
    };
    const image = async () => {
      if (plan.buildFromJar) await during('BUILDING_IMAGE', `Building ${plan.image} from the uploaded JAR.`, build);
      else await act.ensureImage({ image: plan.image });
    };
    if (overlap) {
      // A first deploy that fails leaves no service to undeploy: its network goes with its undo, last.
      if (plan.firstDeploy)
        undo.push(async () => {
          await act.removeServiceContainers({ serviceName: input.serviceName });
        });
      await alongside(act.prepareServiceNetwork({ serviceName: input.serviceName }), image());
    } else await image();
    if (plan.hostPort !== null && plan.currentInstanceIds.length > 0) {
      // Only one container can hold a host port: the old instances stop first, so this redeploy has a gap.
      await act.drainInstances({ instanceIds: plan.currentInstanceIds });
      const { currentDeploymentId } = plan;
      if (currentDeploymentId && wf.patched(HOST_PORT_REDEPLOY_RESTORES)) {
        // Pushed before the removal: should it fail halfway, the undo still brings the old version back.
        undo.push(() =>
          restoreInstances(act, { deploymentId: currentDeploymentId, count: plan.currentInstanceIds.length, healthTimeoutSeconds: input.healthTimeoutSeconds }),
        );
      }
      await act.removeInstances({ instanceIds: plan.currentInstanceIds });
    }
    const started = await during('STARTING', `Starting ${plan.instances} instance(s) of ${plan.image}.`, () =>
      startInstances(act, { deploymentId: input.deploymentId, count: plan.instances, undo }),
    );
    const instances = await during('HEALTH_CHECK', `Waiting up to ${input.healthTimeoutSeconds} s for the health check.`, () =>
      waitAllHealthy(act, { deploymentId: input.deploymentId, instances: started, healthTimeoutSeconds: input.healthTimeoutSeconds }),
    );
    if (plan.rollout) {
      const { steps, pauseSeconds } = plan.rollout;
      await enter('CANARY', `Rolling out beside the current version: ${steps.join(', ')}% of requests, each step judged after ${pauseSeconds} s.`);
      progress.rollout = { steps, step: -1, weight: 0, canary: null, stable: null, verdict: null, reasons: [], at: new Date().toISOString() };
      const rolled = await runCanary(act, { ...input, rollout: plan.rollout, instances, undo, state: progress.rollout });
      if (rolled.outcome === 'REVERTED') {
        // The undo takes the canary's share back to 0, lets what was routed to it finish, then removes what this
        // run created, as after a failure: the previous version serves every request again.
        for (const reason of await undo.run()) wf.log.warn('an undo step of a reverted rollout failed: something it created may be left', { reason });
        const at = new Date().toISOString();
        await act.finishRevert({ deploymentId: input.deploymentId, at, reason: rolled.reason });
        progress.stage = 'REVERTED';
        progress.status = 'REVERTED';
        progress.error = { stage: 'CANARY', reason: rolled.reason, lastLogLines: [] };
        progress.events.push({ at, stage: 'REVERTED', message: rolled.reason });
        await tellOwners(act, input.deploymentId);
        return progress;
      }
    }
    // Recorded before the switch, even with STEPS_OVERLAP: once the switch is made only the new instances
    // serve, and a record failing beside it would send the run into an undo that withdraws them.
    await enter('REGISTERING', 'Switching the gateway to the new instances.');
    const { replacedInstanceIds } = await act.registerDeployment({ deploymentId: input.deploymentId, instances });
    undo.clear();
    const at = new Date().toISOString();
    await act.finishDeployment({ deploymentId: input.deploymentId, at });
    progress.stage = 'RUNNING';
    progress.status = 'RUNNING';
    progress.events.push({ at, stage: 'RUNNING', message: 'The new instances serve all requests.' });
    // From here the new version serves: a failing cleanup is reported, it does not fail the deploy.
    try {
      if (replacedInstanceIds.length > 0) {
        await wf.sleep(input.drainSeconds * 1000);
        await act.removeInstances({ instanceIds: replacedInstanceIds });
      }
      if (plan.rollout) await act.retireCanary({ deploymentId: input.deploymentId });
      await act.pruneServiceImages({ serviceName: input.serviceName });
    } catch (error) {
      wf.log.warn('cleanup after the switch failed: replaced instances or old images may be left', { reason: failureOf(error).reason });
    }
    return progress;
  } catch (error) {
    const failure = failureOf(error);
    progress.error = { stage: progress.stage, ...failure };
    // An update the swarm rolled back by itself says so: the previous version serves, and not by this run's undo.
    const cause = error instanceof wf.ActivityFailure ? error.cause : error;
    const status = cause instanceof wf.ApplicationFailure && cause.type === ROLLED_BACK_BY_SWARM ? 'ROLLED_BACK' : 'FAILED';
    const undoFailures = await undo.run();
    // What could not be undone is logged; the deploy still ends FAILED with its own reason.
    for (const reason of undoFailures) wf.log.warn('an undo step of a failed deploy failed: something it created may be left', { reason });
    await wf.CancellationScope.nonCancellable(() =>
      act.failDeployment({ deploymentId: input.deploymentId, at: new Date().toISOString(), error: progress.error!, status }),
    );
    progress.stage = 'FAILED';
    progress.status = status;
    await wf.CancellationScope.nonCancellable(() => tellOwners(act, input.deploymentId));
    throw wf.ApplicationFailure.create({
      message: `Deploy of ${input.serviceName} failed at ${progress.error.stage}: ${failure.reason}`,
      type: 'DEPLOY_FAILED',
      nonRetryable: true,
      details: undoFailures.length > 0 ? [{ undoFailures }] : undefined,
    });
  }
}
