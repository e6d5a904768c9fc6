import * as wf from '@temporalio/workflow';
import { RolloutPlan, RolloutState, ROLLOUT_WAITS_FOR_TRAFFIC, StartedInstance, StepJudgement } from '../../domain/deploy';
import { DeployActs, Undo } from './activities';
import { abortRolloutUpdate, promoteRolloutUpdate, RolloutDecision } from './definitions';

export type RolloutOutcome = { outcome: 'PROMOTED' } | { outcome: 'REVERTED'; reason: string };

/**
 * A canary rollout of healthy new instances beside the current ones: each step gives the canary its share
 * of requests at the edge, waits the pause, and is judged on what Envoy counted for the two versions. A step
 * that passes moves on; one that fails, or an operator's abort, reverts (the deploy runs the undo this pushes:
 * the canary's share goes back to 0, and its instances drain and go). An operator's promote gives it every request at once. Answers PROMOTED with
 * the canary at 100 (the deploy then switches to it), or REVERTED with the reason, the previous version serving.
 */
export async function runCanary(
  act: DeployActs,
  args: {
    deploymentId: string;
    serviceName: string;
    rollout: RolloutPlan;
    instances: StartedInstance[];
    drainSeconds: number;
    undo: Undo;
    state: RolloutState;
  },
): Promise<RolloutOutcome> {
  const { deploymentId, serviceName, rollout, state } = args;
  let decision: ({ kind: 'PROMOTE' | 'ABORT' } & RolloutDecision) | null = null;
  let judging = false;
  // Refused before it is written to the history: a decision outside a step, a second one, or a malformed one (an
  // update sent to Temporal directly, past the API).
  const acceptsDecision = (given: RolloutDecision) => {
    if (typeof given?.by !== 'string' || given.by.length === 0 || given.by.length > 200)
      throw wf.ApplicationFailure.nonRetryable('A rollout decision names who made it.', 'VALIDATION_FAILED');
    if (!judging || decision) throw wf.ApplicationFailure.nonRetryable('No rollout step is in progress.', 'NO_ROLLOUT_IN_PROGRESS');
  };
  const decide = (kind: 'PROMOTE' | 'ABORT') => (given: RolloutDecision) => {
    decision = { kind, by: given.by };
    return state;
  };
  wf.setHandler(promoteRolloutUpdate, decide('PROMOTE'), { validator: acceptsDecision });
  wf.setHandler(abortRolloutUpdate, decide('ABORT'), { validator: acceptsDecision });

  const record = async (change: Partial<RolloutState>) => {
    Object.assign(state, change, { at: new Date().toISOString() });
    await act.recordRolloutState({ deploymentId, state });
  };
  // The revert itself is the undo pushed below, which the deploy runs: the canary's share back to 0, what was
  // routed to it finished, then its instances and its image gone.
  const revert = (reason: string): RolloutOutcome => {
    judging = false;
    return { outcome: 'REVERTED', reason };
  };

  await act.registerCanary({ deploymentId, instances: args.instances });
  // Should the run fail from here, the canary loses its share, and what was routed to it finishes, before
  // its instances are withdrawn.
  args.undo.push(async () => {
    await act.shareWithCanary({ deploymentId, serviceName, weight: 0 });
    await wf.sleep(args.drainSeconds * 1000);
  });
  const pauseMs = rollout.pauseSeconds * 1000;
  // Judged along the pause, not only at its end: a canary that fails early (its health checks, its errors
  // over enough requests) reverts at once. At most ten looks a pause, so a long pause keeps a short history.
  const lookEveryMs = Math.min(pauseMs, Math.max(5000, Math.ceil(pauseMs / 10)));
  for (const [step, weight] of rollout.steps.entries()) {
    await act.shareWithCanary({ deploymentId, serviceName, weight });
    await record({ step, weight, verdict: null, reasons: [] });
    const since = await act.readVersionCounters({ serviceName });
    judging = true;
    let passed = false;
    for (let pauses = 1; !passed && decision === null; pauses++) {
      let verdict: StepJudgement | null = null;
      for (let spent = 0; spent < pauseMs && decision === null; spent += lookEveryMs) {
        if (await wf.condition(() => decision !== null, Math.min(lookEveryMs, pauseMs - spent))) break;
        const { canary, stable, judgement } = await act.judgeCanaryStep({ serviceName, rollout, since });
        await record({ canary, stable, verdict: judgement.verdict, reasons: judgement.reasons });
        verdict = judgement;
        // An operator's decision, taken while the judge looked, is carried out as it was answered.
        if (decision === null && judgement.verdict === 'FAIL') return revert(`The canary failed at ${weight}%: ${judgement.reasons.join('; ')}.`);
      }
      if (decision !== null) break;
      passed = verdict?.verdict === 'PASS';
      if (!passed && pauses > ROLLOUT_WAITS_FOR_TRAFFIC)
        return revert(`The canary could not be judged at ${weight}%: ${verdict?.reasons.join('; ')} after ${pauses} pauses.`);
    }
    judging = false;
    const decided = decision as ({ kind: 'PROMOTE' | 'ABORT' } & RolloutDecision) | null;
    if (decided?.kind === 'ABORT') {
      await record({ verdict: 'ABORTED', reasons: [`aborted by ${decided.by}`] });
      return revert(`The rollout was aborted by ${decided.by} at ${weight}%.`);
    }
    if (decided?.kind === 'PROMOTE') {
      await act.shareWithCanary({ deploymentId, serviceName, weight: 100 });
      await record({ weight: 100, verdict: 'PROMOTED', reasons: [`promoted by ${decided.by}`] });
      return { outcome: 'PROMOTED' };
    }
  }
  return { outcome: 'PROMOTED' };
}
