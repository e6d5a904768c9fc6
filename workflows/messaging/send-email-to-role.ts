import * as wf from '@temporalio/workflow';
import type { MessagingActivities } from '../../activities/messaging';
import { BATCH_CHUNK, MAX_DELIVERY_ATTEMPTS, RoleSendProgress, roleSendProgressQuery, SendEmailToRoleInput } from './definitions';
import { sendEmailToRoleInputProblem } from '../../domain/messaging';
import { refuseInvalidInput } from '../valid-input';

/** How a send waits out a relay that is down: a pause doubling from 2 s to 30 s, for 30 minutes in all. */
const RELAY_PAUSE_FIRST_MS = 2000;
const RELAY_PAUSE_LONGEST_MS = 30000;
const RELAY_WAIT_MOST_MS = 30 * 60 * 1000;

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
 * A relay that cannot be reached at all is waited for (up to 30 minutes) rather than spend the passes:
 * every message then goes once it is back.
 */
export async function sendEmailToRole(input: SendEmailToRoleInput): Promise<RoleSendProgress> {
  refuseInvalidInput(sendEmailToRoleInputProblem(input));
  const progress: RoleSendProgress = { batchId: input.batchId, pass: 0, delivered: 0, failed: 0, retrying: 0, waitingForRelay: false, done: false };
  let relayWaitedMs = 0;
  let relayPauseMs = RELAY_PAUSE_FIRST_MS;
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
      const chunk = await chunks.deliverBatchChunk({
        batchId: input.batchId,
        afterId,
        limit: BATCH_CHUNK,
        stopOnUnreachable: relayWaitedMs < RELAY_WAIT_MOST_MS,
      });
      progress.delivered += chunk.delivered;
      progress.failed += chunk.failed;
      progress.retrying += chunk.retrying;
      if (chunk.relayUnreachable) {
        // Once waited long enough, chunks no longer stop at the relay: the rows count their attempts as before.
        progress.waitingForRelay = true;
        await wf.sleep(relayPauseMs);
        relayWaitedMs += relayPauseMs;
        relayPauseMs = Math.min(relayPauseMs * 2, RELAY_PAUSE_LONGEST_MS);
        progress.waitingForRelay = false;
        afterId = chunk.lastId;
        continue;
      }
      relayPauseMs = RELAY_PAUSE_FIRST_MS;
      if (chunk.passDone) break;
      afterId = chunk.lastId;
    }
  }
  progress.failed += await record.failRemainingOfBatch({ batchId: input.batchId });
  progress.retrying = 0;
  progress.done = true;
  return progress;
}
