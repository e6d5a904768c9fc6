import { closeApproval } from './close-approval';
import { deliverCallback } from './deliver-callback';
import { ApprovalsDeps } from './deps';
import { publishNow } from './publish-now';
import { submitForApproval } from './submit-for-approval';

/** The publish workflow's activities, each safe to repeat. */
export function createApprovalsActivities(deps: ApprovalsDeps) {
  return {
    submitForApproval: submitForApproval(deps),
    publishNow: publishNow(deps),
    deliverCallback: deliverCallback(deps),
    closeApproval: closeApproval(deps),
  };
}

export type ApprovalsActivities = ReturnType<typeof createApprovalsActivities>;
