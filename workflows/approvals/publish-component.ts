import * as wf from '@temporalio/workflow';
import type { ApprovalsActivities } from '../../activities/approvals';
import { Decision, durationMs, NoticeKind, PublishInput } from '../../domain/approvals';
import { startEmailBatch } from '../messaging/start-email-batch';
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
import { publishInputProblem } from '../../domain/approvals';
import { refuseInvalidInput } from '../valid-input';

// Submitting, confirming a decision and publishing are short writes to the platform's database: local
// activities, recorded in the history like any other, without a round trip through the server's task queue.
const db = wf.proxyLocalActivities<ApprovalsActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 },
});
// The callback is retried until the component takes it, however long that is.
const callback = wf.proxyActivities<ApprovalsActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
});

/**
 * Runs started before this marker took their decisions from the `decision` signal, which anyone with
 * access to Temporal could send. Their recorded signals replay as they were; every signal that arrives
 * now is refused.
 */
export const RAW_DECISION_SIGNALS_REFUSED = 'raw-decision-signals-refused';

/**
 * Runs started before this marker emailed nobody; from it on, each stage's role holders are emailed when
 * the stage is reached, reminded and escalated on the stage's timers, and the requester gets the outcome.
 */
export const APPROVAL_NOTICES = 'approval-notices';

/**
 * Runs started before this marker woke at the due time itself. The change then came late by the time a
 * timer takes to fire, a workflow task to run and an activity to start: 1.5 s on a loaded machine. From
 * this marker on, a run that publishes or archives by itself wakes SCHEDULE_LEAD_MS early. Its activity
 * then waits until the database's clock reaches the due time, and only then starts its transaction. So the
 * change is recorded at its time, never before.
 */
export const SCHEDULE_LEAD = 'schedule-lead';
const SCHEDULE_LEAD_MS = 2000;

/**
 * Runs started before this marker asked once, when the publish was scheduled, whether it needed approval.
 * A policy enabled before its time then let it publish unapproved (#58, finding 1). From this marker on, a
 * scheduled publish that needed none is asked again at its time. If a policy now asks for approval, the run
 * waits for it as an immediate publish would, and its requester is told.
 */
export const APPROVAL_DECIDED_AT_DUE_TIME = 'approval-decided-at-due-time';

/** Why an activity failed: its own failure's message, not the wrapper's ("Activity task failed"). */
const reasonOf = (error: unknown) => (error instanceof wf.ActivityFailure && error.cause ? error.cause.message : String(error));

/**
 * Publishes one revision of a component, through approval when its policy asks for one: submit; with no
 * approval required, publish now; otherwise wait for every stage's decision, in order, then call the
 * component back with the outcome (retried until it takes it). A rejection at any stage ends the request.
 *
 * With `dueAt`, the publish (or, with action ARCHIVE, the archive) waits for its time on a durable timer,
 * after the approval when one is required: approved early, it still publishes at its time; approved late,
 * at the approval. Until the time comes, the cancel endpoint can stop it.
 *
 * A decision arrives only as the `decide` Update sent by the decide endpoint, and counts only once the run
 * has confirmed it in the platform's database, where the endpoint recorded who decided and the four-eyes
 * rules are checked again. A request naming no recorded decision fails, visibly, in the history. A cancel
 * is confirmed the same way.
 */
export async function publishComponent(input: PublishInput): Promise<PublishProgress> {
  refuseInvalidInput(publishInputProblem(input));
  const action = input.action ?? 'PUBLISH';
  const dueAt = input.dueAt ?? null;
  const { workflowId, runId } = wf.workflowInfo();
  const progress: PublishProgress = {
    stage: 'SUBMITTING',
    action,
    dueAt,
    revision: input.revision,
    correlationId: input.correlationId,
    approvalStage: 0,
    approvalStages: [],
  };
  const decisions: ConfirmedDecision[] = [];
  let submitFailure: unknown;
  let cancel: 'NONE' | 'REQUESTED' | 'CONFIRMED' = 'NONE';
  let cancelledBy = '';

  wf.setHandler(publishProgressQuery, () => progress);
  wf.setHandler(submittedUpdate, async () => {
    await wf.condition(() => progress.stage !== 'SUBMITTING' || submitFailure !== undefined);
    if (submitFailure !== undefined) throw submitFailure;
    return progress;
  });
  wf.setHandler(
    decideUpdate,
    async (request) => {
      const confirmed = await db.confirmDecision({ correlationId: progress.correlationId!, stage: request.stage, proposalId: request.proposalId });
      decisions.push(confirmed);
      return confirmed;
    },
    {
      // Rejected before anything is written to the history: a request for a stage the run is not waiting for.
      // `unknown`: a raw Update from outside the API may carry anything.
      validator: (raw: unknown) => {
        const request = raw as Partial<DecideRequest> | null;
        if (typeof request?.proposalId !== 'string' || !Number.isInteger(request.stage)) {
          throw wf.ApplicationFailure.nonRetryable('A decide request names a stage and a recorded decision.', 'VALIDATION_FAILED');
        }
        if (progress.stage !== 'PENDING_APPROVAL' || request.stage !== progress.approvalStage || decisions.some((d) => d.stage === request.stage)) {
          throw wf.ApplicationFailure.nonRetryable(`This run is not waiting for a decision on stage ${request.stage}.`, 'ALREADY_DECIDED');
        }
      },
    },
  );
  wf.setHandler(decisionSignal, async (signal) => {
    if (!wf.patched(RAW_DECISION_SIGNALS_REFUSED)) {
      decisions.push(signal);
      return;
    }
    await db.refuseRawDecision({ workflowId, message: 'decision' });
  });
  wf.setHandler(
    cancelScheduleUpdate,
    async () => {
      cancel = 'REQUESTED';
      try {
        cancelledBy = (await db.confirmScheduleCancel({ runId })).cancelledBy;
      } catch (error) {
        cancel = 'NONE';
        throw error;
      }
      cancel = 'CONFIRMED';
      await wf.condition(() => progress.stage === 'CANCELLED');
      return progress;
    },
    {
      validator: () => {
        if (progress.stage !== 'SCHEDULED' || cancel !== 'NONE') {
          throw wf.ApplicationFailure.nonRetryable('This run is not waiting for its time: there is nothing to cancel.', 'SCHEDULE_PASSED');
        }
      },
    },
  );

  /**
   * Waits on a durable timer for `dueAt`, less `leadMs`; false when a confirmed cancel came first. From the
   * wake on, a cancel is refused: the run has taken the change.
   */
  const timeCame = async (leadMs = 0): Promise<boolean> => {
    progress.stage = 'SCHEDULED';
    const wakeAt = Date.parse(dueAt!) - leadMs;
    for (;;) {
      const left = wakeAt - Date.now();
      if (left > 0) await wf.condition(() => cancel !== 'NONE', left);
      // A cancel being confirmed is settled first; one that is not recorded changes nothing.
      await wf.condition(() => cancel !== 'REQUESTED');
      if (cancel === 'CONFIRMED') return false;
      if (wakeAt <= Date.now()) return true;
    }
  };
  /** Whether this run wakes early for a change it makes itself (see SCHEDULE_LEAD). */
  const leadMs = () => (wf.patched(SCHEDULE_LEAD) ? SCHEDULE_LEAD_MS : 0);
  /** What the run's own change waits for: its due time, when it woke early for it. */
  const notBefore = (lead: number) => (lead > 0 ? dueAt : null);
  const cancelled = async (): Promise<PublishProgress> => {
    await db.finishSchedule({
      runId,
      status: 'CANCELLED',
      message: `${action === 'PUBLISH' ? 'publish' : 'archive'} of ${input.componentType} ${input.resourceId} due ${dueAt} cancelled by ${cancelledBy}`,
    });
    progress.stage = 'CANCELLED';
    await wf.condition(wf.allHandlersFinished);
    return progress;
  };
  const done = (what: string) =>
    db.finishSchedule({ runId, status: 'DONE', message: `${what} ${input.componentType} ${input.resourceId} at its time (due ${dueAt})` });
  const schedule = () =>
    db.recordSchedule({
      runId,
      workflowId,
      componentType: input.componentType,
      resourceId: input.resourceId,
      siteId: input.siteId,
      action,
      revision: action === 'PUBLISH' ? input.revision : null,
      dueAt: dueAt!,
      requestedBy: input.requestedBy,
    });

  if (action === 'ARCHIVE') {
    await schedule();
    const lead = leadMs();
    if (!(await timeCame(lead))) return cancelled();
    progress.stage = 'ARCHIVING';
    await db.archiveNow({ ...input, notBefore: notBefore(lead) });
    await done('archived');
    progress.stage = 'ARCHIVED';
    return progress;
  }

  const correlationId = input.correlationId ?? wf.uuid4();
  const submit = () => db.submitForApproval({ ...input, correlationId, workflowId });
  /** At its time, a publish that needed no approval is asked again (see APPROVAL_DECIDED_AT_DUE_TIME). */
  const submitAgainAtItsTime = async () => {
    try {
      return await submit();
    } catch (error) {
      await db.finishSchedule({
        runId,
        status: 'CANCELLED',
        failed: true,
        message: `publish of ${input.componentType} ${input.resourceId} due ${dueAt} now needs approval, and could not be submitted: ${reasonOf(error)}`,
      });
      throw error;
    }
  };
  let submitted;
  try {
    submitted = await submit();
  } catch (error) {
    submitFailure = error;
    await wf.condition(wf.allHandlersFinished);
    throw error;
  }
  if (dueAt) await schedule();
  let heldAtItsTime = false;
  if (!submitted.required) {
    const lead = dueAt ? leadMs() : 0;
    if (dueAt) {
      if (!(await timeCame(lead))) return cancelled();
      progress.stage = 'PUBLISHING';
      if (wf.patched(APPROVAL_DECIDED_AT_DUE_TIME)) {
        submitted = await submitAgainAtItsTime();
        heldAtItsTime = submitted.required;
      }
      // Held: from now on an approval request like any other, which a manager decides; the schedule is over.
      if (heldAtItsTime) {
        await db.finishSchedule({
          runId,
          status: 'HELD',
          message: `publish of ${input.componentType} ${input.resourceId} due ${dueAt} now needs approval: it waits for it as a publish request`,
        });
      }
    }
    if (!heldAtItsTime) {
      await db.publishNow({ ...input, notBefore: notBefore(lead) });
      if (dueAt) await done(`published revision ${input.revision} of`);
      progress.stage = 'PUBLISHED';
      return progress;
    }
  }

  progress.stage = 'PENDING_APPROVAL';
  progress.correlationId = submitted.correlationId;
  progress.approvalStages = submitted.stages;
  const notices = wf.patched(APPROVAL_NOTICES);
  /** Writes a notice's emails, and hands them to the messaging worker as a batch of their own. */
  const notify = async (kind: NoticeKind, stage: number, decided?: Decision) => {
    const batchId = wf.uuid4();
    const recipients = await db.notifyApproval({ batchId, correlationId: submitted.correlationId!, kind, stage, outcome: decided });
    if (recipients === 0) return;
    await startEmailBatch(batchId);
  };
  if (heldAtItsTime) await notify('HELD', 0);
  let outcome: Decision = 'APPROVED';
  for (let stage = 0; stage < submitted.stages.length && outcome === 'APPROVED'; stage++) {
    progress.approvalStage = stage;
    const decided = () => decisions.some((decision) => decision.stage === stage);
    if (notices) {
      await notify('REQUESTED', stage);
      // The stage's reminder, then its escalation: durable timers, each cancelled by the decision.
      const { remindAfter, escalateAfter } = submitted.stages[stage];
      const reached = Date.now();
      const deadlines = [
        { kind: 'REMINDER' as const, after: remindAfter ? durationMs(remindAfter) : null },
        { kind: 'ESCALATED' as const, after: escalateAfter ? durationMs(escalateAfter) : null },
      ]
        .filter((deadline): deadline is { kind: 'REMINDER' | 'ESCALATED'; after: number } => deadline.after !== null)
        .sort((a, b) => a.after - b.after);
      for (const deadline of deadlines) {
        const left = reached + deadline.after - Date.now();
        if (left > 0 && (await wf.condition(decided, left))) break;
        if (decided()) break;
        await notify(deadline.kind, stage);
      }
    }
    await wf.condition(decided);
    outcome = decisions.find((decision) => decision.stage === stage)!.decision;
  }

  if (outcome === 'APPROVED' && dueAt && !(await timeCame())) {
    // Approved, then cancelled before its time: the approval stays on record, nothing is published, and
    // the draft can be submitted again.
    await db.closeApproval({ correlationId: submitted.correlationId!, outcome });
    await db.withdrawSubmission({ componentType: input.componentType, resourceId: input.resourceId, cancelledBy });
    return cancelled();
  }

  progress.stage = 'CALLING_BACK';
  await callback.deliverCallback({ callbackPath: input.callbackPath, decision: outcome, revision: input.revision, correlationId: submitted.correlationId! });
  await db.closeApproval({ correlationId: submitted.correlationId!, outcome });
  if (notices) await notify('OUTCOME', progress.approvalStage, outcome);
  if (dueAt && !heldAtItsTime) {
    if (outcome === 'APPROVED') await done(`published revision ${input.revision} of`);
    else await db.finishSchedule({ runId, status: 'REJECTED', message: `publish of ${input.componentType} ${input.resourceId} due ${dueAt} was rejected` });
  }
  progress.stage = outcome === 'APPROVED' ? 'PUBLISHED' : 'REJECTED';
  return progress;
}
