import { createHmac } from 'node:crypto';
import { DeliveryFailure } from './delivery-failure';
import { guardedFetch, OutboundPolicy, readCapped } from './outbound';

/** What a site's callback URL receives: one change of one message's delivery status (or a test event). */
export interface StatusCallbackEvent {
  /** The same on every try of this event: a receiver that sees it twice drops the second. */
  id: string;
  type: 'email.status' | 'test';
  siteId: string;
  messageId: string | null;
  to: string | null;
  status: string;
  previousStatus: string | null;
  statusAt: string;
  channel: string | null;
  category: string | null;
}

export const SIGNATURE_HEADER = 'X-Opsflow-Signature';
export const TIMESTAMP_HEADER = 'X-Opsflow-Timestamp';
export const EVENT_ID_HEADER = 'X-Opsflow-Event-Id';

/** The receiver answered, but not with a 2xx. */
export class CallbackRefused extends Error {
  constructor(readonly status: number) {
    super(`the callback URL answered ${status}`);
    this.name = 'CallbackRefused';
  }
}

const CALLBACK_TIMEOUT_MS = 10000;
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * `sha256=` and the hex HMAC-SHA256, under the site's secret, of `{timestamp}.{body}`: the timestamp is signed
 * with the body, so a receiver that refuses old timestamps cannot be replayed an old request.
 */
export function callbackSignature(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * POSTs one event to a callback URL, signed, through the outbound guard, no redirect followed. Answers the
 * receiver's status when it is 2xx; throws with the reason otherwise (any other answer, no answer in 10 s).
 */
export async function postStatusCallback(args: { url: string; secret: string; event: StatusCallbackEvent; policy: OutboundPolicy }): Promise<number> {
  const body = JSON.stringify(args.event);
  const timestamp = Math.floor(Date.now() / 1000);
  const answer = await guardedFetch(
    args.url,
    {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [EVENT_ID_HEADER]: args.event.id,
        [TIMESTAMP_HEADER]: String(timestamp),
        [SIGNATURE_HEADER]: callbackSignature(args.secret, timestamp, body),
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(CALLBACK_TIMEOUT_MS),
    },
    args.policy,
  ).catch((error: Error) => {
    // The guard's refusal says why itself; undici's "fetch failed" says it in its cause.
    throw error instanceof DeliveryFailure
      ? error
      : new Error(`no answer from the callback URL: ${(error.cause as Error | undefined)?.message ?? error.message}`);
  });
  // Read (and capped) so the connection is free again; what it says is not kept.
  await readCapped(answer.body as ReadableStream<Uint8Array> | null, MAX_ANSWER_BYTES).catch(() => '');
  if (answer.status < 200 || answer.status >= 300) throw new CallbackRefused(answer.status);
  return answer.status;
}
