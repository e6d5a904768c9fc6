import * as wf from '@temporalio/workflow';
import type { ApprovalsActivities } from '../../activities/approvals';

// Submitting, confirming a decision and publishing are short writes to the platform's database: local
// activities, recorded in the history like any other, without a round trip through the server's task queue.
export const db = wf.proxyLocalActivities<ApprovalsActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 },
});

// The callback is retried until the component takes it, however long that is.
export const callback = wf.proxyActivities<ApprovalsActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
});
