import pg from 'pg';
import { Knex } from 'knex';
import { decryptSecret, encryptSecret, SecretKeys } from '../../lib/secrets';
import { reencryptColumns } from '../sealed-columns';

export const STATUS_CALLBACK_TABLE = 'settings.status_callback';
export const STATUS_EVENT_TABLE = 'email.status_event';
/** The notification migration 022's trigger sends when it writes status events. */
const STATUS_EVENT_CHANNEL = 'opsflow_status_event';

export interface StatusCallbackRow {
  site_id: string;
  url: string;
  /** Encrypted (lib/secrets), bound to its row. */
  secret: string;
  updated_at: Date;
  updated_by: string | null;
}

const secretPlace = (siteId: string) => ({ table: STATUS_CALLBACK_TABLE, column: 'secret', rowId: siteId });

export async function findStatusCallback(db: Knex, siteId: string): Promise<StatusCallbackRow | undefined> {
  return db<StatusCallbackRow>(STATUS_CALLBACK_TABLE).where({ site_id: siteId }).first();
}

/** Sets a site's callback; a secret left out keeps the stored one (undefined: there is none, nothing written). */
export async function saveStatusCallback(
  db: Knex,
  keys: SecretKeys,
  args: { siteId: string; url: string; secret?: string; by: string },
): Promise<StatusCallbackRow | undefined> {
  const columns = { url: args.url, updated_at: db.fn.now(), updated_by: args.by };
  if (args.secret === undefined) {
    const [kept] = await db<StatusCallbackRow>(STATUS_CALLBACK_TABLE).where({ site_id: args.siteId }).update(columns).returning('*');
    return kept;
  }
  const sealed = { ...columns, secret: encryptSecret(args.secret, keys, secretPlace(args.siteId)) };
  const [row] = await db<StatusCallbackRow>(STATUS_CALLBACK_TABLE)
    .insert({ site_id: args.siteId, ...sealed } as never)
    .onConflict('site_id')
    .merge(Object.keys(sealed) as never)
    .returning('*');
  return row;
}

/** Removes a site's callback, and gives up its events not yet delivered: a callback set later never hears of them. */
export async function deleteStatusCallback(db: Knex, siteId: string): Promise<boolean> {
  return db.transaction(async (trx) => {
    const removed = await trx(STATUS_CALLBACK_TABLE).where({ site_id: siteId }).delete();
    await trx(STATUS_EVENT_TABLE)
      .where({ site_id: siteId })
      .whereNull('delivered_at')
      .whereNull('given_up_at')
      .update({ given_up_at: trx.fn.now(), last_error: "the site's callback was removed" });
    return removed > 0;
  });
}

/** Forgets events delivered or given up more than `days` ago: the outbox keeps a week of history, not all of it. */
export async function forgetOldStatusEvents(db: Knex, days: number): Promise<number> {
  const { rowCount } = await db.raw<{ rowCount: number }>(
    `delete from ${STATUS_EVENT_TABLE} where coalesce(delivered_at, given_up_at) < now() - make_interval(days => ?)`,
    [days],
  );
  return rowCount;
}

/** The plain signing secret, for the request about to be signed; a tampered or moved one throws. */
export function openCallbackSecret(row: Pick<StatusCallbackRow, 'site_id' | 'secret'>, keys: SecretKeys): string {
  return decryptSecret(row.secret, keys, secretPlace(row.site_id));
}

/** Re-encrypts every callback secret the current key did not write (`secrets:rotate`). */
export function reencryptCallbackSecrets(db: Knex, keys: SecretKeys): Promise<{ rewritten: number; unreadable: string[] }> {
  return reencryptColumns(db, keys, { table: STATUS_CALLBACK_TABLE, idColumn: 'site_id', columns: ['secret'] });
}

/** One status change to tell a site about, with what its callback needs: where, the sealed secret, the message. */
export interface DueStatusEvent {
  id: string;
  event_id: string;
  site_id: string;
  log_id: string;
  status: string;
  previous_status: string | null;
  occurred_at: Date;
  attempts: number;
  url: string | null;
  secret: string | null;
  recipient: string | null;
  channel: string | null;
  category: string | null;
}

/**
 * Takes up to `limit` events that are due, oldest first, and leases them for `leaseSeconds`: another
 * dispatcher (or this one's retry after a killed worker) takes them again only once the lease is over, so
 * each try counts once and an event in flight is not sent twice side by side. Skips rows another holds.
 */
export async function leaseDueStatusEvents(db: Knex, args: { limit: number; leaseSeconds: number }): Promise<DueStatusEvent[]> {
  const { rows } = await db.raw<{ rows: DueStatusEvent[] }>(
    `with due as (
       select id from ${STATUS_EVENT_TABLE}
       where delivered_at is null and given_up_at is null and next_at <= now()
       order by next_at, id limit ? for update skip locked
     ), leased as (
       update ${STATUS_EVENT_TABLE} event set attempts = event.attempts + 1, next_at = now() + make_interval(secs => ?)
       from due where event.id = due.id
       returning event.*
     )
     select leased.id::text, leased.event_id::text, leased.site_id, leased.log_id::text, leased.status, leased.previous_status,
            leased.occurred_at, leased.attempts, callback.url, callback.secret, log.recipient, log.channel, log.category
     from leased
     left join ${STATUS_CALLBACK_TABLE} callback on callback.site_id = leased.site_id
     left join email.email_log log on log.id = leased.log_id
     order by leased.id`,
    [args.limit, args.leaseSeconds],
  );
  return rows;
}

export async function markStatusEventDelivered(db: Knex, id: string): Promise<void> {
  await db(STATUS_EVENT_TABLE).where({ id }).update({ delivered_at: db.fn.now(), last_error: null });
}

/** A try that failed: the next one after `retryInSeconds`, or none (`given_up_at`) when that is null. */
export async function noteStatusEventFailed(db: Knex, id: string, reason: string, retryInSeconds: number | null): Promise<void> {
  await db(STATUS_EVENT_TABLE)
    .where({ id })
    .update(
      retryInSeconds === null
        ? { given_up_at: db.fn.now(), last_error: reason }
        : { next_at: db.raw('now() + make_interval(secs => ?)', [retryInSeconds]), last_error: reason },
    );
}

/** Seconds until the next event is due (0: one is due now), or null when none waits. */
export async function secondsToNextStatusEvent(db: Knex): Promise<number | null> {
  const { rows } = await db.raw<{ rows: Array<{ seconds: number | null }> }>(
    // Not greatest(0, …) of the minimum alone: greatest() skips a null, and no event would read as one due now.
    `select case when min(next_at) is null then null else greatest(0, extract(epoch from min(next_at) - now())) end::float as seconds
     from ${STATUS_EVENT_TABLE} where delivered_at is null and given_up_at is null`,
  );
  return rows[0]?.seconds ?? null;
}

/**
 * A connection that listens for new status events (the trigger's notification): `wait` resolves at the next
 * one, at once if one came since the last wait ended (while its caller was busy), after `ms`, or when
 * `signal` aborts (a worker shutting down), whichever comes first. A lost connection only makes the waits run to `ms`.
 */
export async function listenForStatusEvents(databaseUrl: string): Promise<{ wait(ms: number, signal?: AbortSignal): Promise<void>; close(): Promise<void> }> {
  // A database that does not answer fails the attempt (retried) rather than hang it before its first heartbeat.
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 10000 });
  let notified = false;
  let wake: (() => void) | null = null;
  const notice = () => {
    notified = true;
    wake?.();
  };
  client.on('notification', notice);
  client.on('error', notice);
  await client.connect();
  await client.query(`listen ${STATUS_EVENT_CHANNEL}`);
  return {
    wait: (ms, signal) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(done, notified || signal?.aborted ? 0 : ms);
        function done() {
          clearTimeout(timer);
          signal?.removeEventListener('abort', done);
          wake = null;
          notified = false;
          resolve();
        }
        signal?.addEventListener('abort', done);
        wake = done;
      }),
    close: () => client.end().catch(() => undefined),
  };
}
