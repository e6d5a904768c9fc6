import { Knex } from 'knex';

export const IDEMPOTENCY_KEY_TABLE = 'settings.idempotency_key';
/** How long a key's first answer is kept and replayed. */
export const IDEMPOTENCY_KEY_HOURS = 24;

/** What a key finds: it is this request's to answer, an answer to replay, a request in flight, or another request's. */
export type KeyClaim = { kind: 'claimed' } | { kind: 'replay'; status: number; body: unknown } | { kind: 'in-flight' } | { kind: 'other-request' };

interface KeyRow {
  scope: string;
  key: string;
  request_digest: string;
  answer_status: number | null;
  answer_body: unknown;
}

/**
 * Claims `key` for a request (its `digest`) within `scope` (a caller and a route), or says what holds it.
 * Keys older than the kept hours are gone first, whoever's they were.
 */
export async function claimIdempotencyKey(db: Knex, args: { scope: string; key: string; digest: string }): Promise<KeyClaim> {
  await db(IDEMPOTENCY_KEY_TABLE)
    .where('created_at', '<', db.raw(`now() - make_interval(hours => ?)`, [IDEMPOTENCY_KEY_HOURS]))
    .delete();
  // Twice at most: a key released between the insert and the read is free again.
  for (let tries = 0; tries < 2; tries++) {
    const claimed = await db(IDEMPOTENCY_KEY_TABLE)
      .insert({ scope: args.scope, key: args.key, request_digest: args.digest })
      .onConflict(['scope', 'key'])
      .ignore()
      .returning('key');
    if (claimed.length > 0) return { kind: 'claimed' };
    const held = await db<KeyRow>(IDEMPOTENCY_KEY_TABLE).where({ scope: args.scope, key: args.key }).first();
    if (!held) continue;
    if (held.request_digest !== args.digest) return { kind: 'other-request' };
    if (held.answer_status === null) return { kind: 'in-flight' };
    return { kind: 'replay', status: held.answer_status, body: held.answer_body };
  }
  return { kind: 'in-flight' };
}

/** The answer a claimed key replays from now on. */
export async function keepIdempotentAnswer(db: Knex, args: { scope: string; key: string; status: number; body: unknown }): Promise<void> {
  await db(IDEMPOTENCY_KEY_TABLE)
    .where({ scope: args.scope, key: args.key })
    .update({ answer_status: args.status, answer_body: JSON.stringify(args.body ?? null) });
}

/** Frees a claimed key whose request was refused or failed having changed nothing: the same request may be sent again. */
export async function releaseIdempotencyKey(db: Knex, args: { scope: string; key: string }): Promise<void> {
  await db(IDEMPOTENCY_KEY_TABLE).where({ scope: args.scope, key: args.key }).whereNull('answer_status').delete();
}
