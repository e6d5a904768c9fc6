import * as wf from '@temporalio/workflow';
import { PublishProgress } from './definitions';
import { db } from './activities';
import { ChangeRun } from './change-run';

/**
 * Runs started before this marker woke at the due time itself. The change then came late by the time a
 * timer takes to fire, a workflow task to run and an activity to start: 1.5 s on a loaded machine. From
 * this marker on, a run that publishes or archives by itself wakes SCHEDULE_LEAD_MS early. Its activity
 * then waits until the database's clock reaches the due time, and only then starts its transaction. So the
 * change is recorded at its time, never before.
 */
export const SCHEDULE_LEAD = 'schedule-lead';
export const SCHEDULE_LEAD_MS = 2000;

/** How early a publish run wakes for a change it makes itself (see SCHEDULE_LEAD). */
export const publishRunLeadMs = () => (wf.patched(SCHEDULE_LEAD) ? SCHEDULE_LEAD_MS : 0);

/** What the run's own change waits for: its due time, when it woke early for it. */
export const notBefore = (run: ChangeRun, leadMs: number) => (leadMs > 0 ? run.dueAt : null);

/** Lists the run's change as due, so that the API can show and cancel it. */
export function recordSchedule(run: ChangeRun): Promise<void> {
  const { input } = run;
  return db.recordSchedule({
    runId: run.runId,
    workflowId: run.workflowId,
    componentType: input.componentType,
    resourceId: input.resourceId,
    siteId: input.siteId,
    action: run.action,
    revision: run.action === 'PUBLISH' ? input.revision : null,
    dueAt: run.dueAt!,
    requestedBy: input.requestedBy,
  });
}

/**
 * Waits on a durable timer for the due time, less `leadMs`; false when a confirmed cancel came first. From
 * the wake on, a cancel is refused: the run has taken the change.
 */
export async function untilItsTime(run: ChangeRun, leadMs = 0): Promise<boolean> {
  run.progress.stage = 'SCHEDULED';
  const wakeAt = Date.parse(run.dueAt!) - leadMs;
  for (;;) {
    const left = wakeAt - Date.now();
    if (left > 0) await wf.condition(() => run.cancel !== 'NONE', left);
    // A cancel being confirmed is settled first; one that is not recorded changes nothing.
    await wf.condition(() => run.cancel !== 'REQUESTED');
    if (run.cancel === 'CONFIRMED') return false;
    if (wakeAt <= Date.now()) return true;
  }
}

/** Closes the scheduled change as cancelled, once every handler (the cancel's own) has answered. */
export async function endCancelled(run: ChangeRun): Promise<PublishProgress> {
  const { input } = run;
  await db.finishSchedule({
    runId: run.runId,
    status: 'CANCELLED',
    message: `${run.action === 'PUBLISH' ? 'publish' : 'archive'} of ${input.componentType} ${input.resourceId} due ${run.dueAt} cancelled by ${run.cancelledBy}`,
  });
  run.progress.stage = 'CANCELLED';
  await wf.condition(wf.allHandlersFinished);
  return run.progress;
}

/** Closes the scheduled change as done: `what` says what happened to the item. */
export function finishDone(run: ChangeRun, what: string): Promise<void> {
  const { input } = run;
  return db.finishSchedule({ runId: run.runId, status: 'DONE', message: `${what} ${input.componentType} ${input.resourceId} at its time (due ${run.dueAt})` });
}

/** Closes the scheduled change with another ending than done or cancelled. */
export function finishOtherwise(run: ChangeRun, ending: { status: 'HELD' | 'REJECTED' | 'CANCELLED'; message: string; failed?: boolean }): Promise<void> {
  return db.finishSchedule({ runId: run.runId, ...ending });
}
