import { Context } from '@temporalio/activity';
import { outboundPolicyOf } from '../../adapters/messaging/outbound';
import { postStatusCallback, StatusCallbackEvent } from '../../adapters/messaging/status-callback';
import {
  DueStatusEvent,
  forgetOldStatusEvents,
  leaseDueStatusEvents,
  listenForStatusEvents,
  markStatusEventDelivered,
  noteStatusEventFailed,
  openCallbackSecret,
  secondsToNextStatusEvent,
} from '../../data/messaging/status-callbacks';
import { secretKeysOf } from '../../lib/secrets';
import { MessagingDeps } from './deps';

/** Events sent side by side. */
const PARALLEL_CALLBACKS = 10;
/** How long a try holds its event: longer than a callback may take (10 s), so that no two tries overlap. */
const LEASE_SECONDS = 20;
/** How long delivered and given-up events stay in the outbox, for an operator to look into. */
const KEEP_EVENTS_DAYS = 7;
/** How long an idle dispatcher waits without word of a new event before it looks again. */
const IDLE_LOOK_MS = 5000;

/** The pause before try `attempts + 1`: 2 s doubling to 15 minutes; none after the 25th (about 4 hours in all). */
export function callbackRetryInSeconds(attempts: number): number | null {
  if (attempts >= 25) return null;
  return Math.min(2 ** attempts, 15 * 60);
}

/**
 * Delivers the status events that are due, then waits for more (the trigger's notification, or the next
 * retry's time), for `forMs`, heartbeating; then returns for the workflow to call again. A worker killed
 * meanwhile loses nothing: the events are rows, the ones in flight are leased for 20 s and then taken again
 * by the retry of this activity, with the same event id.
 */
export function deliverStatusCallbacks({ db, config }: MessagingDeps) {
  return async (input: { forMs: number }): Promise<{ delivered: number; failed: number }> => {
    const until = Date.now() + input.forMs;
    const outcome = { delivered: 0, failed: 0 };
    await forgetOldStatusEvents(db, KEEP_EVENTS_DAYS);
    const listener = await listenForStatusEvents(config.databaseUrl);
    const heartbeat = setInterval(() => Context.current().heartbeat(), 5000);
    try {
      while (Date.now() < until && !Context.current().cancellationSignal.aborted) {
        const events = await leaseDueStatusEvents(db, { limit: PARALLEL_CALLBACKS, leaseSeconds: LEASE_SECONDS });
        if (events.length > 0) {
          const sent = await Promise.all(events.map((event) => deliverOne(db, config, event)));
          outcome.delivered += sent.filter(Boolean).length;
          outcome.failed += sent.filter((ok) => !ok).length;
          continue;
        }
        const nextInSeconds = await secondsToNextStatusEvent(db);
        const waitMs = Math.min(IDLE_LOOK_MS, until - Date.now(), nextInSeconds === null ? Infinity : Math.max(50, nextInSeconds * 1000));
        if (waitMs > 0) await listener.wait(waitMs, Context.current().cancellationSignal);
      }
    } finally {
      clearInterval(heartbeat);
      await listener.close();
    }
    return outcome;
  };
}

/** One try of one event; never throws: a failure is recorded on the event with its next try's time. */
async function deliverOne(db: MessagingDeps['db'], config: MessagingDeps['config'], event: DueStatusEvent): Promise<boolean> {
  try {
    if (!event.url || !event.secret) throw new Error("the site's callback was removed");
    await postStatusCallback({
      url: event.url,
      secret: openCallbackSecret({ site_id: event.site_id, secret: event.secret }, secretKeysOf(config)),
      event: statusCallbackEvent(event),
      policy: outboundPolicyOf(config, 'callback'),
    });
    await markStatusEventDelivered(db, event.id);
    return true;
  } catch (error) {
    const removed = !event.url;
    await noteStatusEventFailed(db, event.id, (error as Error).message.slice(0, 500), removed ? null : callbackRetryInSeconds(event.attempts));
    return false;
  }
}

export function statusCallbackEvent(event: DueStatusEvent): StatusCallbackEvent {
  return {
    id: event.event_id,
    type: 'email.status',
    siteId: event.site_id,
    messageId: event.log_id,
    to: event.recipient,
    status: event.status,
    previousStatus: event.previous_status,
    statusAt: new Date(event.occurred_at).toISOString(),
    channel: event.channel,
    category: event.category,
  };
}
