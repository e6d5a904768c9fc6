import { registeredComponentType } from '../../data/content/component-types';
import { setComponentStatus } from '../../data/content/components';
import { ComponentStatus, RELEASE } from '../../domain/approvals';
import { findRelease, setReleaseStatus } from '../../data/content/releases';
import {
  confirmCancel,
  finishScheduledChange,
  recordScheduledChange,
  ScheduledChange,
  scheduledChangeOfRun,
  ScheduledChangeStatus,
} from '../../data/approvals/scheduled-changes';
import { untilDueByDatabase } from './due-time';
import { refusalsAreFinal } from '../final-refusals';
import { ApprovalsDeps } from './deps';

/** Lists the run's change as due. Safe to repeat: keyed by the run. */
export function recordSchedule({ db }: ApprovalsDeps) {
  return async (change: ScheduledChange): Promise<void> => recordScheduledChange(db, change);
}

/** A cancel counts only when the cancel endpoint recorded it; a raw Update fails here (final). */
export function confirmScheduleCancel({ db }: ApprovalsDeps) {
  return async (input: { runId: string }): Promise<{ cancelledBy: string }> => refusalsAreFinal(() => confirmCancel(db, input.runId));
}

/** Closes the run's scheduled change and writes its job-log row. Safe to repeat. */
export function finishSchedule({ db }: ApprovalsDeps) {
  // `failed`: the change did not happen for a reason the job log shows as a failure, not a skip.
  return async (input: { runId: string; status: Exclude<ScheduledChangeStatus, 'SCHEDULED'>; message: string; failed?: boolean }): Promise<void> => {
    // A release whose time came but that published nothing says so, whatever the run believes it did.
    const change = input.status === 'DONE' ? await scheduledChangeOfRun(db, input.runId) : undefined;
    const release = change?.component_type === RELEASE ? await findRelease(db, change.resource_id) : undefined;
    if (release?.status === 'FAILED') {
      const why = (release.failure ?? []).map((failure) => failure.message).join('; ');
      await finishScheduledChange(db, {
        ...input,
        failed: true,
        message: `release ${release.id} due ${change!.due_at.toISOString()} published nothing: ${why}`,
      });
      return;
    }
    await finishScheduledChange(db, input);
  };
}

/** Archives the component at its time: the runtime stops serving it. Archiving it twice is a no-op. */
export function archiveNow({ db }: ApprovalsDeps) {
  return async (input: { componentType: string; resourceId: string; requestedBy: string; notBefore?: string | null }): Promise<void> => {
    // As publishNow: a run that woke a little early waits for its time by the database's clock.
    if (input.notBefore) await untilDueByDatabase(db, input.notBefore);
    await setStatusFor(db, input, 'ARCHIVED', input.requestedBy);
  };
}

/**
 * An approved publish cancelled before its time: the component leaves PENDING_APPROVAL for DRAFT, so it
 * can be submitted again. Safe to repeat.
 */
export function withdrawSubmission({ db }: ApprovalsDeps) {
  return async (input: { componentType: string; resourceId: string; cancelledBy: string }): Promise<void> => {
    if (input.componentType === RELEASE) await setReleaseStatus(db, { id: input.resourceId, status: 'OPEN', onlyFrom: 'PENDING_APPROVAL' });
    else await setStatusFor(db, input, 'DRAFT', input.cancelledBy, 'PENDING_APPROVAL');
  };
}

/** The scheduled component's status set by `by` (a person's id): unless its status is already that, or, with `onlyFrom`, is not that one. */
function setStatusFor(
  db: ApprovalsDeps['db'],
  target: { componentType: string; resourceId: string },
  status: ComponentStatus,
  by: string,
  onlyFrom?: ComponentStatus,
) {
  return setComponentStatus(db, {
    type: registeredComponentType(target.componentType),
    id: target.resourceId,
    status,
    actor: { id: by, name: null },
    onlyFrom,
  });
}
