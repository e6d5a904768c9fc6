import * as wf from '@temporalio/workflow';
import { PublishInput, ScheduledAction } from '../../domain/approvals';
import { db } from './activities';
import {
  cancelScheduleUpdate,
  ConfirmedDecision,
  DecideRequest,
  decideUpdate,
  decisionSignal,
  PublishProgress,
  publishProgressQuery,
  submittedUpdate,
} from './definitions';

/**
 * Runs started before this marker took their decisions from the `decision` signal, which anyone with
 * access to Temporal could send. Their recorded signals replay as they were; every signal that arrives
 * now is refused.
 */
export const RAW_DECISION_SIGNALS_REFUSED = 'raw-decision-signals-refused';

/**
 * What a publish or archive run knows while it runs. Its steps and the handlers that answer the API share
 * it: the handlers read the progress and record decisions and cancels, the steps wait for them.
 */
export interface ChangeRun {
  readonly input: PublishInput;
  readonly action: ScheduledAction;
  /** When the change is due; null: as soon as it may happen. */
  readonly dueAt: string | null;
  readonly workflowId: string;
  readonly runId: string;
  readonly progress: PublishProgress;
  /** Decisions confirmed in the database, one per stage. */
  readonly decisions: ConfirmedDecision[];
  /** A cancel of the scheduled change: asked for by the endpoint, then confirmed in the database. */
  cancel: 'NONE' | 'REQUESTED' | 'CONFIRMED';
  cancelledBy: string;
  /** Why the submission failed: the `submitted` Update answers with it. */
  submitFailure: unknown;
}

export function startChangeRun(input: PublishInput): ChangeRun {
  const action = input.action ?? 'PUBLISH';
  const dueAt = input.dueAt ?? null;
  const { workflowId, runId } = wf.workflowInfo();
  return {
    input,
    action,
    dueAt,
    workflowId,
    runId,
    progress: { stage: 'SUBMITTING', action, dueAt, revision: input.revision, correlationId: input.correlationId, approvalStage: 0, approvalStages: [] },
    decisions: [],
    cancel: 'NONE',
    cancelledBy: '',
    submitFailure: undefined,
  };
}

/**
 * Answers the API: the progress query, the `submitted` Update (once the run has published, queued or
 * scheduled its change), the decisions, and the cancel of a scheduled change. A run that waits for no
 * decision refuses them as a publish run does when it is not waiting: a `decide` fails ALREADY_DECIDED,
 * and a raw `decision` signal is refused and the refusal recorded.
 */
export function answerRequests(run: ChangeRun): void {
  wf.setHandler(publishProgressQuery, () => run.progress);
  wf.setHandler(submittedUpdate, async () => {
    await wf.condition(() => run.progress.stage !== 'SUBMITTING' || run.submitFailure !== undefined);
    if (run.submitFailure !== undefined) throw run.submitFailure;
    return run.progress;
  });
  answerDecisions(run);
  wf.setHandler(cancelScheduleUpdate, () => confirmCancel(run), { validator: () => refuseCancelOutOfTime(run) });
}

/**
 * A decision arrives only as the `decide` Update sent by the decide endpoint. It counts only once the run
 * has confirmed it in the database, where the endpoint recorded who decided. A raw `decision` signal is
 * refused, except in runs from before that rule.
 */
function answerDecisions(run: ChangeRun): void {
  wf.setHandler(
    decideUpdate,
    async (request) => {
      const confirmed = await db.confirmDecision({ correlationId: run.progress.correlationId!, stage: request.stage, proposalId: request.proposalId });
      run.decisions.push(confirmed);
      return confirmed;
    },
    // Refused before anything is written to the history: a request for a stage the run is not waiting for.
    { validator: (raw: unknown) => refuseDecisionOutOfTurn(run, raw) },
  );
  wf.setHandler(decisionSignal, async (signal) => {
    if (!wf.patched(RAW_DECISION_SIGNALS_REFUSED)) {
      run.decisions.push(signal);
      return;
    }
    await db.refuseRawDecision({ workflowId: run.workflowId, message: 'decision' });
  });
}

/**
 * Refuses a decide request for a stage the run is not waiting for. `raw` is `unknown`: a raw Update from
 * outside the API may carry anything.
 */
function refuseDecisionOutOfTurn(run: ChangeRun, raw: unknown): void {
  const request = raw as Partial<DecideRequest> | null;
  if (typeof request?.proposalId !== 'string' || !Number.isInteger(request.stage)) {
    throw wf.ApplicationFailure.nonRetryable('A decide request names a stage and a recorded decision.', 'VALIDATION_FAILED');
  }
  const { progress, decisions } = run;
  if (progress.stage !== 'PENDING_APPROVAL' || request.stage !== progress.approvalStage || decisions.some((d) => d.stage === request.stage)) {
    throw wf.ApplicationFailure.nonRetryable(`This run is not waiting for a decision on stage ${request.stage}.`, 'ALREADY_DECIDED');
  }
}

/** A cancel counts once the database confirms the endpoint recorded it; the run then ends CANCELLED. */
async function confirmCancel(run: ChangeRun): Promise<PublishProgress> {
  run.cancel = 'REQUESTED';
  try {
    run.cancelledBy = (await db.confirmScheduleCancel({ runId: run.runId })).cancelledBy;
  } catch (error) {
    run.cancel = 'NONE';
    throw error;
  }
  run.cancel = 'CONFIRMED';
  await wf.condition(() => run.progress.stage === 'CANCELLED');
  return run.progress;
}

function refuseCancelOutOfTime(run: ChangeRun): void {
  if (run.progress.stage !== 'SCHEDULED' || run.cancel !== 'NONE') {
    throw wf.ApplicationFailure.nonRetryable('This run is not waiting for its time: there is nothing to cancel.', 'SCHEDULE_PASSED');
  }
}
