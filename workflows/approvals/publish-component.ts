import * as wf from '@temporalio/workflow';
import type { ApprovalsActivities } from '../../activities/approvals';
import { Decision, PublishInput, publishInputProblem } from '../../domain/approvals';
import { reasonOf } from '../failure-reason';
import { refuseInvalidInput } from '../valid-input';
import { callback, db } from './activities';
import { APPROVAL_NOTICES, decisionOfEveryStage, noticesOf } from './approval-stages';
import { archiveAtItsTime } from './archive-component';
import { answerRequests, ChangeRun, startChangeRun } from './change-run';
import { PublishProgress } from './definitions';
import { endCancelled, finishDone, finishOtherwise, notBefore, publishRunLeadMs, recordSchedule, untilItsTime } from './scheduled-change';

/**
 * Runs started before this marker asked once, when the publish was scheduled, whether it needed approval.
 * So a policy enabled before the due time let it publish unapproved (#58, finding 1). From this marker on, a
 * scheduled publish that needed none is asked again at its time. If a policy now asks for approval, the run
 * waits for it as an immediate publish would, and its requester is told.
 */
export const APPROVAL_DECIDED_AT_DUE_TIME = 'approval-decided-at-due-time';

type Submitted = Awaited<ReturnType<ApprovalsActivities['submitForApproval']>>;
type Submit = () => Promise<Submitted>;

/**
 * Publishes one revision of a component, through approval when its policy asks for one: submit; with no
 * approval required, publish now; otherwise wait for every stage's decision, in order, then call the
 * component back with the outcome (retried until it takes it). A rejection at any stage ends the request.
 *
 * With `dueAt`, the publish waits for its time on a durable timer, after the approval when one is required:
 * approved early, it still publishes at its time; approved late, at the approval. Until the time comes, the
 * cancel endpoint can stop it.
 *
 * A decision arrives only as the `decide` Update sent by the decide endpoint, and counts only once the run
 * has confirmed it in the platform's database, where the endpoint recorded who decided and the four-eyes
 * rules are checked again. A request naming no recorded decision fails, visibly, in the history. A cancel
 * is confirmed the same way.
 */
export async function publishComponent(input: PublishInput): Promise<PublishProgress> {
  refuseInvalidInput(publishInputProblem(input) ?? archiveRunsApart(input));
  const run = startChangeRun(input);
  answerRequests(run);
  // Only archive runs begun before archiveComponent came get here: their input passed the checks of its day.
  if (run.action === 'ARCHIVE') return archiveAtItsTime(run, publishRunLeadMs);

  const correlationId = input.correlationId ?? wf.uuid4();
  const submit = () => db.submitForApproval({ ...input, correlationId, workflowId: run.workflowId });
  let submitted = await submitOrAnswerWhy(run, submit);
  if (run.dueAt) await recordSchedule(run);
  let heldAtItsTime = false;
  if (!submitted.required) {
    const published = await publishWithoutApproval(run, submit);
    if ('ended' in published) return published.ended;
    submitted = published.held;
    heldAtItsTime = true;
  }
  return publishOnceApproved(run, submitted, heldAtItsTime);
}

/**
 * A scheduled archive is an archiveComponent run (decision 008). A run begun here before that carries no
 * input-check marker, so refuseInvalidInput lets it go on as it began.
 */
const archiveRunsApart = (input: PublishInput) => (input.action === 'ARCHIVE' ? 'an archive runs as archiveComponent, not publishComponent' : null);

/** The first submission. When it fails, the `submitted` Update answers with its failure before the run ends. */
async function submitOrAnswerWhy(run: ChangeRun, submit: Submit): Promise<Submitted> {
  try {
    return await submit();
  } catch (error) {
    run.submitFailure = error;
    await wf.condition(wf.allHandlersFinished);
    throw error;
  }
}

/**
 * No approval was required at the submission: the revision is published now, or at its due time. At its
 * time it is asked again (see APPROVAL_DECIDED_AT_DUE_TIME). If it needs approval by then, it is held for
 * one, and the new approval request is returned.
 */
async function publishWithoutApproval(run: ChangeRun, submit: Submit): Promise<{ ended: PublishProgress } | { held: Submitted }> {
  const lead = run.dueAt ? publishRunLeadMs() : 0;
  if (run.dueAt) {
    if (!(await untilItsTime(run, lead))) return { ended: await endCancelled(run) };
    run.progress.stage = 'PUBLISHING';
    if (wf.patched(APPROVAL_DECIDED_AT_DUE_TIME)) {
      const again = await submitAgainAtItsTime(run, submit);
      if (again.required) {
        // From now on an approval request like any other, which a manager decides; the schedule is over.
        const message = `publish of ${run.input.componentType} ${run.input.resourceId} due ${run.dueAt} now needs approval: it waits for it as a publish request`;
        await finishOtherwise(run, { status: 'HELD', message });
        return { held: again };
      }
    }
  }
  await db.publishNow({ ...run.input, notBefore: notBefore(run, lead) });
  if (run.dueAt) await finishDone(run, `published revision ${run.input.revision} of`);
  run.progress.stage = 'PUBLISHED';
  return { ended: run.progress };
}

/** A submission at the due time that fails closes the schedule as a failure the job log shows. */
async function submitAgainAtItsTime(run: ChangeRun, submit: Submit): Promise<Submitted> {
  try {
    return await submit();
  } catch (error) {
    const { componentType, resourceId } = run.input;
    const message = `publish of ${componentType} ${resourceId} due ${run.dueAt} now needs approval, and could not be submitted: ${reasonOf(error)}`;
    await finishOtherwise(run, { status: 'CANCELLED', failed: true, message });
    throw error;
  }
}

/**
 * Waits for every stage's decision, then for the due time when there is one, and calls the component back
 * with the outcome, which publishes or rejects it. The approval is then closed and the requester told.
 */
async function publishOnceApproved(run: ChangeRun, submitted: Submitted, heldAtItsTime: boolean): Promise<PublishProgress> {
  const { progress, input } = run;
  const correlationId = submitted.correlationId!;
  progress.stage = 'PENDING_APPROVAL';
  progress.correlationId = correlationId;
  progress.approvalStages = submitted.stages;
  const notices = wf.patched(APPROVAL_NOTICES);
  const notify = noticesOf(correlationId);
  if (heldAtItsTime) await notify('HELD', 0);
  const outcome = await decisionOfEveryStage(run, submitted.stages, notices ? notify : null);
  if (outcome === 'APPROVED' && run.dueAt && !(await untilItsTime(run))) return withdrawApproved(run, correlationId);

  progress.stage = 'CALLING_BACK';
  await callback.deliverCallback({ callbackPath: input.callbackPath, decision: outcome, revision: input.revision, correlationId });
  await db.closeApproval({ correlationId, outcome });
  if (notices) await notify('OUTCOME', progress.approvalStage, outcome);
  if (run.dueAt && !heldAtItsTime) await closeScheduleWith(run, outcome);
  progress.stage = outcome === 'APPROVED' ? 'PUBLISHED' : 'REJECTED';
  return progress;
}

/**
 * Approved, then cancelled before its time: the approval stays on record, nothing is published, and the
 * draft can be submitted again.
 */
async function withdrawApproved(run: ChangeRun, correlationId: string): Promise<PublishProgress> {
  await db.closeApproval({ correlationId, outcome: 'APPROVED' });
  await db.withdrawSubmission({ componentType: run.input.componentType, resourceId: run.input.resourceId, cancelledBy: run.cancelledBy });
  return endCancelled(run);
}

/** Closes a scheduled publish that went through approval: done when approved, else rejected. */
function closeScheduleWith(run: ChangeRun, outcome: Decision): Promise<void> {
  if (outcome === 'APPROVED') return finishDone(run, `published revision ${run.input.revision} of`);
  const message = `publish of ${run.input.componentType} ${run.input.resourceId} due ${run.dueAt} was rejected`;
  return finishOtherwise(run, { status: 'REJECTED', message });
}
