import { closeApproval } from './close-approval';
import { confirmDecision } from './confirm-decision';
import { deliverCallback } from './deliver-callback';
import { ApprovalsDeps } from './deps';
import { notifyApproval } from './notify-approval';
import { publishNow } from './publish-now';
import { pruneRevisionsByRule } from './prune-revisions';
import { recordJobRun } from '../job-log';
import { refuseRawDecision } from './refuse-raw-decision';
import { submitForApproval } from './submit-for-approval';
import { archiveNow, confirmScheduleCancel, finishSchedule, recordSchedule, withdrawSubmission } from './scheduled-changes';

/** The publish workflow's activities and the revision retention job's, each safe to repeat. */
export function createApprovalsActivities(deps: ApprovalsDeps) {
  return {
    submitForApproval: submitForApproval(deps),
    publishNow: publishNow(deps),
    deliverCallback: deliverCallback(deps),
    closeApproval: closeApproval(deps),
    confirmDecision: confirmDecision(deps),
    refuseRawDecision: refuseRawDecision(),
    recordSchedule: recordSchedule(deps),
    confirmScheduleCancel: confirmScheduleCancel(deps),
    finishSchedule: finishSchedule(deps),
    archiveNow: archiveNow(deps),
    withdrawSubmission: withdrawSubmission(deps),
    notifyApproval: notifyApproval(deps),
    pruneRevisionsByRule: pruneRevisionsByRule(deps),
    recordJobRun: recordJobRun(deps),
  };
}

export type ApprovalsActivities = ReturnType<typeof createApprovalsActivities>;
