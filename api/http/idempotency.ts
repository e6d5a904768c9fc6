import { createHash } from 'node:crypto';
import { Db } from '../../data/db';
import { Context } from 'koa';
import { badRequest, PlatformError } from '../../lib/errors';
import { claimIdempotencyKey, IDEMPOTENCY_KEY_HOURS, keepIdempotentAnswer, releaseIdempotencyKey } from '../../data/idempotency-keys';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_KEY_SCHEMA = { type: 'string', pattern: '^[!-~]{1,255}$' } as const;
const KEY = new RegExp(IDEMPOTENCY_KEY_SCHEMA.pattern);

/** JSON with every object's keys sorted: the same body with its fields in another order is the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value ?? null);
}

/**
 * Runs `answer` once per `Idempotency-Key`, for one caller on one route: the same key with the same request
 * (path parameters, query and body) replays the first 2xx answer for 24 hours; with another request it is
 * 422 IDEMPOTENCY_KEY_REUSED; while the first is still being answered, 409 IDEMPOTENCY_KEY_IN_USE. A request
 * refused or failed (any answer but 2xx) frees its key. Without the header, `answer` simply runs.
 */
export async function answerOncePerKey(
  db: Db,
  ctx: Context,
  request: { scope: string; params: unknown; query: unknown; body: unknown },
  answer: () => Promise<void>,
): Promise<void> {
  const key = ctx.get(IDEMPOTENCY_HEADER);
  if (key === '') return answer();
  if (!KEY.test(key))
    throw badRequest('VALIDATION_FAILED', `The ${IDEMPOTENCY_HEADER} header is not valid.`, [
      { path: `headers.${IDEMPOTENCY_HEADER.toLowerCase()}`, message: 'must be 1 to 255 visible ASCII characters' },
    ]);
  const held = { scope: request.scope, key };
  const digest = createHash('sha256')
    .update(canonicalJson({ params: request.params, query: request.query, body: request.body }))
    .digest('hex');
  const claim = await claimIdempotencyKey(db, { ...held, digest });
  if (claim.kind === 'other-request')
    throw new PlatformError(
      'IDEMPOTENCY_KEY_REUSED',
      `This ${IDEMPOTENCY_HEADER} was sent with another request in the last ${IDEMPOTENCY_KEY_HOURS} hours; use a new key.`,
    );
  if (claim.kind === 'in-flight')
    throw new PlatformError('IDEMPOTENCY_KEY_IN_USE', `A request with this ${IDEMPOTENCY_HEADER} is still being answered; send it again once it is.`);
  if (claim.kind === 'replay') {
    ctx.status = claim.status;
    ctx.body = claim.body;
    ctx.set('Idempotent-Replayed', 'true');
    return;
  }
  try {
    await answer();
  } catch (error) {
    await releaseIdempotencyKey(db, held);
    throw error;
  }
  if (ctx.status >= 200 && ctx.status < 300) await keepIdempotentAnswer(db, { ...held, status: ctx.status, body: ctx.body });
  else await releaseIdempotencyKey(db, held);
}
