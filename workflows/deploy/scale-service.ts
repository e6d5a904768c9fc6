import * as wf from '@temporalio/workflow';
import { deployActivities, startInstances, Undo, waitAllHealthy } from './activities';
import { ScaleOutcome, scaleProgressQuery, ScaleServiceInput, ScaleStage } from './definitions';
import { scaleInputProblem } from '../../domain/deploy';
import { refuseInvalidInput } from '../valid-input';

/** Scales started before this marker replaced stopped instances without a RESTARTED event; they replay as they were. */
export const SCALE_RESTART_EVENTS = 'scale-restart-events';

/**
 * Brings a running service to its desired instance count: instances that died are removed, missing ones
 * start and join the gateway once healthy, extra ones drain and stop. The reconcile schedule runs this for
 * every service; the scale endpoint runs it after changing the desired count.
 */
export async function scaleService(input: ScaleServiceInput): Promise<ScaleOutcome> {
  refuseInvalidInput(scaleInputProblem(input));
  const act = deployActivities(input);
  const outcome: ScaleOutcome = { serviceName: input.serviceName, desired: 0, replaced: 0, started: 0, stopped: 0, acted: false };
  let stage: ScaleStage = 'SURVEYING';
  wf.setHandler(scaleProgressQuery, () => ({ ...outcome, stage }));
  const survey = await act.surveyInstances({ serviceName: input.serviceName });
  if (!survey) {
    stage = 'DONE';
    return outcome;
  }
  outcome.acted = true;
  outcome.desired = survey.desired;
  if (survey.dead.length > 0) {
    stage = 'REPLACING';
    await act.removeInstances({ instanceIds: survey.dead });
    outcome.replaced = survey.dead.length;
  }

  const missing = survey.desired - survey.alive.length;
  if (missing > 0) {
    stage = 'STARTING';
    const undo = new Undo();
    let startedInstead: string[];
    try {
      const started = await startInstances(act, { deploymentId: survey.deploymentId, count: missing, undo });
      const instances = await waitAllHealthy(act, { deploymentId: survey.deploymentId, instances: started, healthTimeoutSeconds: input.healthTimeoutSeconds });
      await act.registerInstances({ deploymentId: survey.deploymentId, instances });
      outcome.started = missing;
      startedInstead = instances.map((instance) => instance.instanceId);
    } catch (error) {
      await undo.run();
      await wf.CancellationScope.nonCancellable(() => act.setServiceStatus({ serviceName: input.serviceName, status: 'DEGRADED' }));
      throw error;
    }
    // Told after the replacements serve, outside their undo: an event that cannot be written never takes them down.
    if (survey.dead.length > 0 && wf.patched(SCALE_RESTART_EVENTS)) {
      try {
        await act.recordRestarts({ serviceName: input.serviceName, replaced: survey.dead, startedInstead });
      } catch (error) {
        wf.log.warn('the RESTARTED events of a scale were not recorded', { reason: (error as Error).message });
      }
    }
  } else if (missing < 0) {
    stage = 'DRAINING';
    const extra = survey.alive.slice(missing);
    await act.drainInstances({ instanceIds: extra });
    await wf.sleep(input.drainSeconds * 1000);
    await act.removeInstances({ instanceIds: extra });
    outcome.stopped = extra.length;
  }
  await act.setServiceStatus({ serviceName: input.serviceName, status: 'RUNNING' });
  stage = 'DONE';
  return outcome;
}
