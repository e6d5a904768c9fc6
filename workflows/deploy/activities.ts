import * as wf from '@temporalio/workflow';
import type { DeployActivities } from '../../activities/deploy';
import { StartedInstance } from '../../domain/deploy';
import { causeOf, reasonOf } from '../failure-reason';

/** The deploy activities grouped by kind of timeout; every deploy-domain workflow uses these. */
export function deployActivities(args: { healthTimeoutSeconds: number }) {
  const quickDb = wf.proxyActivities<DeployActivities>({
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '1 second', maximumAttempts: 10 },
  });
  const dockerOp = wf.proxyActivities<DeployActivities>({
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumAttempts: 5 },
  });
  const dockerBuild = wf.proxyActivities<DeployActivities>({
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '1 minute',
    retry: { initialInterval: '5 seconds', maximumAttempts: 3 },
  });
  const healthCheck = wf.proxyActivities<DeployActivities>({
    startToCloseTimeout: `${args.healthTimeoutSeconds + 60} seconds`,
    heartbeatTimeout: '10 seconds',
    retry: { initialInterval: '1 second', maximumAttempts: 3 },
  });
  // A notice is a courtesy: it must not keep the deploy's run (and so the service) busy for minutes of retries.
  const notice = wf.proxyActivities<DeployActivities>({
    startToCloseTimeout: '30 seconds',
    retry: { initialInterval: '1 second', maximumAttempts: 3 },
  });
  return {
    loadDeployPlan: quickDb.loadDeployPlan,
    recordDeployStage: quickDb.recordDeployStage,
    registerDeployment: quickDb.registerDeployment,
    registerInstances: quickDb.registerInstances,
    recordRestarts: quickDb.recordRestarts,
    registerCanary: quickDb.registerCanary,
    shareWithCanary: quickDb.shareWithCanary,
    readVersionCounters: quickDb.readVersionCounters,
    judgeCanaryStep: quickDb.judgeCanaryStep,
    recordRolloutState: quickDb.recordRolloutState,
    finishRevert: quickDb.finishRevert,
    retireCanary: quickDb.retireCanary,
    drainInstances: quickDb.drainInstances,
    finishDeployment: quickDb.finishDeployment,
    failDeployment: quickDb.failDeployment,
    notifyDeployOwners: notice.notifyDeployOwners,
    setServiceStatus: quickDb.setServiceStatus,
    listReconcilableServices: quickDb.listReconcilableServices,
    deregisterService: quickDb.deregisterService,
    deleteService: quickDb.deleteService,
    recordJobRun: quickDb.recordJobRun,
    recordServiceLimits: quickDb.recordServiceLimits,
    readContainerLimits: dockerOp.readContainerLimits,
    applyContainerLimits: dockerOp.applyContainerLimits,
    restoreContainerLimits: dockerOp.restoreContainerLimits,
    surveyInstances: dockerOp.surveyInstances,
    startInstance: dockerOp.startInstance,
    startInstances: dockerOp.startInstances,
    prepareServiceNetwork: dockerOp.prepareServiceNetwork,
    withdrawInstances: dockerOp.withdrawInstances,
    removeInstances: dockerOp.removeInstances,
    removeOrphanInstances: dockerOp.removeOrphanInstances,
    removeImage: dockerOp.removeImage,
    pruneServiceImages: dockerOp.pruneServiceImages,
    removeServiceContainers: dockerOp.removeServiceContainers,
    removeServiceImages: dockerOp.removeServiceImages,
    buildServiceImage: dockerBuild.buildServiceImage,
    ensureImage: dockerBuild.ensureImage,
    waitUntilHealthy: healthCheck.waitUntilHealthy,
    waitInstancesHealthy: healthCheck.waitInstancesHealthy,
  };
}

export type DeployActs = ReturnType<typeof deployActivities>;

/**
 * Runs that started before this marker stopped undoing at the first undo step that failed, and then never
 * recorded their failure; their histories replay as they were.
 */
export const UNDO_RUNS_EVERY_STEP = 'deploy-undo-runs-every-step';

/** Undo steps of a saga, newest first; run without cancellation so a cancelled run still cleans up. */
export class Undo {
  private readonly steps: Array<() => Promise<void>> = [];

  push(step: () => Promise<void>): void {
    this.steps.unshift(step);
  }

  clear(): void {
    this.steps.length = 0;
  }

  /** Runs every step, even after one fails; answers the reasons of those that failed. */
  async run(): Promise<string[]> {
    const failures: string[] = [];
    await wf.CancellationScope.nonCancellable(async () => {
      for (const step of this.steps) {
        try {
          await step();
        } catch (error) {
          if (!wf.patched(UNDO_RUNS_EVERY_STEP)) throw error;
          failures.push(failureOf(error).reason);
        }
      }
    });
    return failures;
  }
}

/**
 * Starts `count` instances of a deployment that was serving (the ones a host-port redeploy stopped before
 * starting its own) and puts them back behind the gateway once healthy.
 */
export async function restoreInstances(act: DeployActs, args: { deploymentId: string; count: number; healthTimeoutSeconds: number }): Promise<void> {
  // Its own undo list, never run: a restore that fails halfway leaves what it started to the next deploy,
  // whose first step removes whatever belongs to no serving deployment.
  const started = await startInstances(act, { deploymentId: args.deploymentId, count: args.count, undo: new Undo() });
  const instances = await waitAllHealthy(act, { deploymentId: args.deploymentId, instances: started, healthTimeoutSeconds: args.healthTimeoutSeconds });
  await act.registerInstances({ deploymentId: args.deploymentId, instances });
}

/**
 * Runs before this marker started and health-checked each container in an activity of its own, and undid
 * them one by one. Since then one activity starts a deploy's instances and one waits for them, whatever
 * runs them: containers on the engine (the docker driver) or a swarm service's tasks (the swarm driver).
 */
export const INSTANCES_AS_ONE_STEP = 'deploy-instances-as-one-step';

/**
 * Starts `count` instances of a deploy. Their withdrawal is pushed to `undo` before they are asked for, so
 * a half-started set is withdrawn as well.
 */
export async function startInstances(act: DeployActs, args: { deploymentId: string; count: number; undo: Undo }): Promise<StartedInstance[]> {
  const instanceIds = Array.from({ length: args.count }, () => wf.uuid4());
  if (wf.patched(INSTANCES_AS_ONE_STEP)) {
    args.undo.push(() => act.withdrawInstances({ deploymentId: args.deploymentId, instanceIds }));
    return act.startInstances({ deploymentId: args.deploymentId, instanceIds });
  }
  for (const instanceId of instanceIds) args.undo.push(() => act.removeInstances({ instanceIds: [instanceId] }));
  return Promise.all(instanceIds.map((instanceId) => act.startInstance({ deploymentId: args.deploymentId, instanceId })));
}

/**
 * Waits until the new instances answer their health check, against one deadline fixed now. Answers the
 * instances that serve: the ones started, or the tasks the swarm ran for them.
 */
export async function waitAllHealthy(
  act: DeployActs,
  args: { deploymentId: string; instances: StartedInstance[]; healthTimeoutSeconds: number },
): Promise<StartedInstance[]> {
  const deadline = new Date(Date.now() + args.healthTimeoutSeconds * 1000).toISOString();
  if (wf.patched(INSTANCES_AS_ONE_STEP)) return act.waitInstancesHealthy({ deploymentId: args.deploymentId, instances: args.instances, deadline });
  await Promise.all(args.instances.map((instance) => act.waitUntilHealthy({ deploymentId: args.deploymentId, instance, deadline })));
  return args.instances;
}

/**
 * Runs two steps at once and answers `step`'s result once both have settled, failing with `step`'s failure,
 * else `beside`'s: neither is left running when the run goes on to its undo.
 */
export async function alongside<T>(beside: Promise<unknown>, step: Promise<T>): Promise<T> {
  const [besideSettled, stepSettled] = await Promise.allSettled([beside, step]);
  if (stepSettled.status === 'rejected') throw stepSettled.reason;
  if (besideSettled.status === 'rejected') throw besideSettled.reason;
  return stepSettled.value;
}

/** The reason an activity failed with, and the log lines an unhealthy instance left. */
export function failureOf(error: unknown): { reason: string; lastLogLines: string[] } {
  const cause = causeOf(error);
  const reason = reasonOf(error);
  const details = cause instanceof wf.ApplicationFailure ? (cause.details?.[0] as { lastLogLines?: string[] } | undefined) : undefined;
  return { reason, lastLogLines: details?.lastLogLines ?? [] };
}
