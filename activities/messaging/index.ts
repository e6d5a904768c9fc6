import { countPendingOfBatch, deliverBatchChunk, failRemainingOfBatch } from './deliver-batch-chunk';
import { deliverEmail, failEmailLog } from './deliver-email';
import { deliverStatusCallbacks } from './deliver-status-callbacks';
import { MessagingDeps } from './deps';

/** The email sends' activities and the status callbacks', each safe to repeat: a row already final is never sent again. */
export function createMessagingActivities(deps: MessagingDeps) {
  return {
    deliverEmail: deliverEmail(deps),
    failEmailLog: failEmailLog(deps),
    deliverBatchChunk: deliverBatchChunk(deps),
    countPendingOfBatch: countPendingOfBatch(deps),
    failRemainingOfBatch: failRemainingOfBatch(deps),
    deliverStatusCallbacks: deliverStatusCallbacks(deps),
  };
}

export type MessagingActivities = ReturnType<typeof createMessagingActivities>;
