import * as wf from '@temporalio/workflow';
import type { MessagingActivities } from '../../activities/messaging';

/** Rounds of one run before it continues as new, keeping its history short. */
const ROUNDS_PER_RUN = 100;
/** How long one round delivers and waits for events before it reports back. */
const ROUND_MS = 5 * 60 * 1000;

const dispatcher = wf.proxyActivities<MessagingActivities>({
  startToCloseTimeout: '6 minutes',
  // A killed worker is noticed within 15 s; another worker takes up its round (and its events in flight, 20 s later).
  heartbeatTimeout: '15 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/**
 * The platform's one status-callback dispatcher (`status-callbacks`, started by the messaging worker):
 * round after round, it delivers every site's status events as they come and retries the ones a receiver
 * refused, with backoff. The events are rows of an outbox the database fills (migration 022); this run
 * holds nothing of them.
 */
export async function deliverStatusCallbacks(): Promise<void> {
  for (let round = 0; round < ROUNDS_PER_RUN; round++) {
    await dispatcher.deliverStatusCallbacks({ forMs: ROUND_MS });
  }
  await wf.continueAsNew<typeof deliverStatusCallbacks>();
}
