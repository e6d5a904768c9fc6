import * as wf from '@temporalio/workflow';
import type { MessagingActivities } from '../../activities/messaging';
import { BATCH_CHUNK, MAX_DELIVERY_ATTEMPTS, RoleSendProgress, roleSendProgressQuery, SendEmailToRoleInput } from './definitions';

const chunks = wf.proxyActivities<MessagingActivities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});
const record = wf.proxyActivities<MessagingActivities>({ startToCloseTimeout: '1 minute', retry: { initialInterval: '1 second' } });

/**
 * Sends one template to every recipient of a batch (their PENDING rows were written before this started),
 * chunk by chunk, so ten thousand recipients are a few dozen activities, not ten thousand workflows. Rows
 * that failed for a temporary reason get further passes with backoff; after the last one they are FAILED.
 */
export async function sendEmailToRole(input: SendEmailToRoleInput): Promise<RoleSendProgress> {
  const progress: RoleSendProgress = { batchId: input.batchId, pass: 0, delivered: 0, failed: 0, retrying: 0, done: false };
  wf.setHandler(roleSendProgressQuery, () => progress);

  for (let pass = 1; pass <= MAX_DELIVERY_ATTEMPTS; pass++) {
    progress.pass = pass;
    progress.retrying = 0;
    if (pass > 1) {
      if ((await record.countPendingOfBatch({ batchId: input.batchId })) === 0) break;
      await wf.sleep(1000 * 2 ** (pass - 2));
    }
    let afterId = '0';
    for (;;) {
      const chunk = await chunks.deliverBatchChunk({ batchId: input.batchId, afterId, limit: BATCH_CHUNK });
      progress.delivered += chunk.delivered;
      progress.failed += chunk.failed;
      progress.retrying += chunk.retrying;
      if (chunk.passDone) break;
      afterId = chunk.lastId;
    }
  }
  progress.failed += await record.failRemainingOfBatch({ batchId: input.batchId });
  progress.retrying = 0;
  progress.done = true;
  return progress;
}
