import { registeredComponentType } from '../../data/content/component-types';
import { setComponentStatus } from '../../data/content/components';
import { confirmCancel, finishScheduledChange, recordScheduledChange, ScheduledChange, ScheduledChangeStatus } from '../../data/approvals/scheduled-changes';
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
  return async (input: { runId: string; status: Exclude<ScheduledChangeStatus, 'SCHEDULED'>; message: string }): Promise<void> =>
    finishScheduledChange(db, input);
}

/** Archives the component at its time: the runtime stops serving it. Archiving it twice is a no-op. */
export function archiveNow({ db }: ApprovalsDeps) {
  return async (input: { componentType: string; resourceId: string; requestedBy: string }): Promise<void> => {
    await setComponentStatus(db, {
      type: registeredComponentType(input.componentType),
      id: input.resourceId,
      status: 'ARCHIVED',
      actor: { id: input.requestedBy, name: null },
    });
  };
}

/**
 * An approved publish cancelled before its time: the component leaves PENDING_APPROVAL for DRAFT, so it
 * can be submitted again. Safe to repeat.
 */
export function withdrawSubmission({ db }: ApprovalsDeps) {
  return async (input: { componentType: string; resourceId: string; cancelledBy: string }): Promise<void> => {
    await setComponentStatus(db, {
      type: registeredComponentType(input.componentType),
      id: input.resourceId,
      status: 'DRAFT',
      actor: { id: input.cancelledBy, name: null },
      onlyFrom: 'PENDING_APPROVAL',
    });
  };
}
