import * as wf from '@temporalio/workflow';
import { alongside, DeployActs, deployActivities, failureOf, restoreInstances, startInstances, Undo, waitAllHealthy } from './activities';
import { DeployStage, StartedInstance } from '../../domain/deploy';
import { DeployProgress, deployProgressQuery, DeployServiceInput } from './definitions';
import { deployInputProblem, ROLLED_BACK_BY_SWARM } from '../../domain/deploy';
import { causeOf } from '../failure-reason';
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
async function tellOwners(act: DeployActs, deploymentId: string): Promise<void> {
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

/** What a deploy run knows while it runs, shared by its steps. */
interface DeployRun {
  readonly input: DeployServiceInput;
  readonly act: DeployActs;
  readonly progress: DeployProgress;
  /** Whether steps that do not wait for each other run at once (see STEPS_OVERLAP). */
  readonly overlap: boolean;
  /** What to take back, newest first, should the deploy fail before its switch. */
  readonly undo: Undo;
}

type DeployPlan = Awaited<ReturnType<DeployActs['loadDeployPlan']>>;

/**
 * Deploys a service (first deploy, redeploy or rollback) as a saga: build the image (JAR deploys), start
 * the instances, wait for their health check, switch the gateway to them, then stop the instances they
 * replace once those have drained. Any failure undoes what this run created, newest first; a service
 * that was running before keeps serving its previous version.
 */
export async function deployService(input: DeployServiceInput): Promise<DeployProgress> {
  refuseInvalidInput(deployInputProblem(input));
  const run = startDeployRun(input);
  try {
    const plan = await loadPlan(run);
    await prepareImage(run, plan);
    if (plan.hostPort !== null && plan.currentInstanceIds.length > 0) await freeHostPort(run, plan);
    const instances = await startHealthyInstances(run, plan);
    if (plan.rollout && (await canaryReverted(run, plan, instances))) return run.progress;
    await switchToNewInstances(run, plan, instances);
    return run.progress;
  } catch (error) {
    return await undoAndFail(run, error);
  }
}

function startDeployRun(input: DeployServiceInput): DeployRun {
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
  return { input, act, progress, overlap: wf.patched(STEPS_OVERLAP), undo: new Undo() };
}

/** Records that the deploy entered `stage`, in its progress and in the database. */
async function enter(run: DeployRun, stage: DeployStage, message: string): Promise<void> {
  const at = new Date().toISOString();
  run.progress.stage = stage;
  run.progress.events.push({ at, stage, message });
  await run.act.recordDeployStage({ deploymentId: run.input.deploymentId, stage, message, at });
}

/** Enters `stage` and runs its step: once recorded, or (STEPS_OVERLAP) while it is recorded. */
async function during<T>(run: DeployRun, stage: DeployStage, message: string, step: () => Promise<T>): Promise<T> {
  if (run.overlap) return alongside(enter(run, stage, message), step());
  await enter(run, stage, message);
  return step();
}

/**
 * Loads the plan, and removes what a run of this service that died unfinished could not clean up: while the
 * plan loads (STEPS_OVERLAP), or after it.
 */
async function loadPlan({ act, input, overlap }: DeployRun): Promise<DeployPlan> {
  // A run that died unfinished: one terminated from the Web UI, for example.
  const removeOrphans = () => act.removeOrphanInstances({ serviceName: input.serviceName, deploymentId: input.deploymentId });
  const plan = overlap
    ? await alongside(removeOrphans(), act.loadDeployPlan({ deploymentId: input.deploymentId }))
    : await act.loadDeployPlan({ deploymentId: input.deploymentId });
  if (!overlap && wf.patched(ORPHANS_REMOVED_FIRST)) await removeOrphans();
  return plan;
}

/** Builds the image from the JAR, or makes sure it is there; with STEPS_OVERLAP, the service's network alongside. */
async function prepareImage(run: DeployRun, plan: DeployPlan): Promise<void> {
  const { act, input, undo } = run;
  const build = () => {
    undo.push(() => act.removeImage({ image: plan.image }));
    return act.buildServiceImage({ deploymentId: input.deploymentId });
  };
  const image = async () => {
    if (plan.buildFromJar) await during(run, 'BUILDING_IMAGE', `Building ${plan.image} from the uploaded JAR.`, build);
    else await act.ensureImage({ image: plan.image });
  };
  if (!run.overlap) return image();
  // A first deploy that fails leaves no service to undeploy: its network goes with its undo, last.
  if (plan.firstDeploy)
    undo.push(async () => {
      await act.removeServiceContainers({ serviceName: input.serviceName });
    });
  await alongside(act.prepareServiceNetwork({ serviceName: input.serviceName }), image());
}

/** Only one container can hold a host port: the old instances stop first, so this redeploy has a gap. */
async function freeHostPort({ act, input, undo }: DeployRun, plan: DeployPlan): Promise<void> {
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

/** Starts the new instances and waits for their health check: answers the instances that serve. */
async function startHealthyInstances(run: DeployRun, plan: DeployPlan): Promise<StartedInstance[]> {
  const { act, input, undo } = run;
  const started = await during(run, 'STARTING', `Starting ${plan.instances} instance(s) of ${plan.image}.`, () =>
    startInstances(act, { deploymentId: input.deploymentId, count: plan.instances, undo }),
  );
  return during(run, 'HEALTH_CHECK', `Waiting up to ${input.healthTimeoutSeconds} s for the health check.`, () =>
    waitAllHealthy(act, { deploymentId: input.deploymentId, instances: started, healthTimeoutSeconds: input.healthTimeoutSeconds }),
  );
}

/**
 * Rolls out beside the current version, step by step. True when the rollout was reverted: the undo then
 * takes the canary's share back to 0, lets what was routed to it finish, and removes what this run created,
 * as after a failure. The previous version serves every request again.
 */
async function canaryReverted(run: DeployRun, plan: DeployPlan, instances: StartedInstance[]): Promise<boolean> {
  const { act, input, progress, undo } = run;
  const { steps, pauseSeconds } = plan.rollout!;
  await enter(run, 'CANARY', `Rolling out beside the current version: ${steps.join(', ')}% of requests, each step judged after ${pauseSeconds} s.`);
  progress.rollout = { steps, step: -1, weight: 0, canary: null, stable: null, verdict: null, reasons: [], at: new Date().toISOString() };
  const rolled = await runCanary(act, { ...input, rollout: plan.rollout!, instances, undo, state: progress.rollout });
  if (rolled.outcome !== 'REVERTED') return false;
  for (const reason of await undo.run()) wf.log.warn('an undo step of a reverted rollout failed: something it created may be left', { reason });
  const at = new Date().toISOString();
  await act.finishRevert({ deploymentId: input.deploymentId, at, reason: rolled.reason });
  progress.stage = 'REVERTED';
  progress.status = 'REVERTED';
  progress.error = { stage: 'CANARY', reason: rolled.reason, lastLogLines: [] };
  progress.events.push({ at, stage: 'REVERTED', message: rolled.reason });
  await tellOwners(act, input.deploymentId);
  return true;
}

/** Switches the gateway to the new instances, then removes the ones they replace once those have drained. */
async function switchToNewInstances(run: DeployRun, plan: DeployPlan, instances: StartedInstance[]): Promise<void> {
  const { act, input, progress } = run;
  // Recorded before the switch, even with STEPS_OVERLAP: once the switch is made only the new instances
  // serve, and a record failing beside it would send the run into an undo that withdraws them.
  await enter(run, 'REGISTERING', 'Switching the gateway to the new instances.');
  const { replacedInstanceIds } = await act.registerDeployment({ deploymentId: input.deploymentId, instances });
  run.undo.clear();
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
}

/** Undoes what this run created, newest first, records the failure, tells the owners, and fails the run. */
async function undoAndFail(run: DeployRun, error: unknown): Promise<never> {
  const { act, input, progress } = run;
  const failure = failureOf(error);
  progress.error = { stage: progress.stage, ...failure };
  // An update the swarm rolled back by itself says so: the previous version serves, and not by this run's undo.
  const cause = causeOf(error);
  const status = cause instanceof wf.ApplicationFailure && cause.type === ROLLED_BACK_BY_SWARM ? 'ROLLED_BACK' : 'FAILED';
  const undoFailures = await run.undo.run();
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
