import { Knex } from 'knex';
import { PlatformError } from '../../lib/errors';
import { preparedRows, rawRows, serializedOn } from '../db';
import { Page, PageRequest, paginate } from '../paging';
import { DeliveryStatus, EmailCategory, EmailLogStatus } from '../../domain/messaging';
import { SUPPRESSION_TABLE, UNSUBSCRIPTION_TABLE } from './suppressions';

export const EMAIL_LOG_TABLE = 'email.email_log';
export const EMAIL_BATCH_TABLE = 'email.email_batch';

export interface EmailLogRow {
  id: number;
  site_id: string;
  created_at: Date;
  updated_at: Date;
  template_id: string | null;
  template_revision: number | null;
  batch_id: string | null;
  recipient: string;
  locale: 'en' | 'ar' | null;
  subject: string | null;
  status: EmailLogStatus;
  /** Where the message is, GOV.UK Notify's way (domain/messaging.ts). */
  delivery_status: DeliveryStatus;
  error: string | null;
  attempts: number;
  missing_variables: string[];
  variables: Record<string, unknown> | null;
  requested_by: string | null;
  /** Set for the platform's own emails (approval notices): the template is the platform's, not a site's. */
  platform_template: string | null;
  /** The name of the configuration that took the message, once one has. */
  channel: string | null;
  /** Bulk (a role send, or a bulk template's) or transactional, as it was sent. */
  category: EmailCategory;
  /**
   * The id of the configuration an attempt is handing the message to, until its outcome is recorded. Set
   * when an attempt starts: the last one ended without a record (a killed worker), and that configuration
   * may have the message; the next attempt sends through it alone, so no other provider sends it again.
   */
  sending_through: string | null;
}

export async function findEmailLog(db: Knex, id: string | number): Promise<EmailLogRow | undefined> {
  return db<EmailLogRow>(EMAIL_LOG_TABLE)
    .where({ id: Number(id) })
    .first();
}

export interface NewEmailLog {
  siteId: string;
  templateId: string;
  templateRevision: number;
  recipient: string;
  locale: 'en' | 'ar';
  variables: Record<string, unknown>;
  requestedBy: string;
  /** The sent revision's category. */
  category: EmailCategory;
}

/** The PENDING row written before any delivery starts. */
export async function insertEmailLog(db: Knex, log: NewEmailLog): Promise<EmailLogRow> {
  const [row] = (await db(EMAIL_LOG_TABLE)
    .insert({
      site_id: log.siteId,
      template_id: log.templateId,
      template_revision: log.templateRevision,
      recipient: log.recipient,
      locale: log.locale,
      variables: JSON.stringify(log.variables),
      requested_by: log.requestedBy,
      category: log.category,
      status: 'PENDING',
    })
    .returning('*')) as EmailLogRow[];
  return row;
}

/**
 * Runs `write` (the send's rows) only while the user has made fewer than `limit` sends (a single send or a
 * bulk one each count once) in the last `windowSeconds`; else 429 RATE_LIMITED with when to try again. One
 * user's sends are counted and written one at a time (an advisory lock), so parallel requests cannot all
 * slip under the limit.
 */
export async function withinSendLimit<T>(
  db: Knex,
  args: { userId: string; limit: number; windowSeconds: number },
  write: (trx: Knex.Transaction) => Promise<T>,
): Promise<T> {
  return serializedOn(db, `email-send:${args.userId}`, async (trx) => {
    const [recent] = await rawRows<{ sends: number; retry_after: number | null }>(
      trx,
      `select count(distinct coalesce(batch_id::text, id::text))::int as sends,
              ceil(extract(epoch from (min(created_at) + make_interval(secs => ?) - now())))::int as retry_after
       from ${EMAIL_LOG_TABLE} where requested_by = ? and created_at > now() - make_interval(secs => ?)`,
      [args.windowSeconds, args.userId, args.windowSeconds],
    );
    if (recent.sends >= args.limit) {
      throw new PlatformError(
        'RATE_LIMITED',
        `At most ${args.limit} sends per ${args.windowSeconds} s; try again later.`,
        undefined,
        Math.max(1, recent.retry_after ?? args.windowSeconds),
      );
    }
    return write(trx);
  });
}

/**
 * Starts a delivery attempt on each PENDING row of `ids` (`sending`, one more attempt counted, handed first
 * to `firstChannel`), except those whose address is on their site's suppression list, or unsubscribed from
 * their (bulk) category: those end FAILED, `suppressed`, unsent. One statement for a bulk send's whole
 * slice. Rows already final are neither. A claimed row whose last attempt ended unrecorded answers the
 * configuration it was being handed to (`boundTo`): it goes through that one alone.
 */
export async function startAttempts(
  db: Knex,
  ids: ReadonlyArray<string | number>,
  /** The id of the first configuration of the order. */
  firstChannel: string | null,
): Promise<{ claimed: Map<string, { boundTo: string | null }>; suppressed: Set<string> }> {
  if (ids.length === 0) return { claimed: new Map(), suppressed: new Set() };
  const rows = await preparedRows<{ id: string | number; outcome: 'claimed' | 'suppressed'; bound_to: string | null }>(
    db,
    'email_log_start_attempts',
    `with why_not as (
       -- Why each row may not be sent: the reason of its address's suppression entry, or the category it left.
       select log.id,
              (select listed.reason from ${SUPPRESSION_TABLE} as listed
                where listed.site_id = log.site_id and listed.address = lower(log.recipient) and listed.lifted_at is null) as suppression,
              log.category <> 'transactional' and exists (select 1 from ${UNSUBSCRIPTION_TABLE} as left_
                where left_.site_id = log.site_id and left_.address = lower(log.recipient) and left_.category = log.category) as unsubscribed
         from ${EMAIL_LOG_TABLE} as log
        where log.id = any($1::bigint[]) and log.status = 'PENDING'
     ), suppressed as (
       update ${EMAIL_LOG_TABLE} as log
          set status = 'FAILED', delivery_status = 'suppressed', sending_through = null, updated_at = now(),
              error = coalesce('not sent: the address is on the site''s suppression list (' || why_not.suppression || ')',
                               'not sent: the recipient left ' || log.category || ' mail (one-click unsubscribe)')
         from why_not
        where log.id = why_not.id and log.id = any($1::bigint[]) and log.status = 'PENDING' and (why_not.suppression is not null or why_not.unsubscribed)
       returning log.id
     ), claimed as (
       update ${EMAIL_LOG_TABLE} as log
          set attempts = log.attempts + 1, delivery_status = 'sending', updated_at = now(),
              sending_through = coalesce(before.sending_through, $2::text)
         -- Locked and read as last committed: an attempt overlapping an earlier one of the same row sees its binding.
         from (select id, sending_through from ${EMAIL_LOG_TABLE} where id = any($1::bigint[]) for update) as before
        where log.id = before.id and log.id = any($1::bigint[]) and log.status = 'PENDING' and log.id not in (select id from suppressed)
       returning log.id, before.sending_through as bound_to
     )
     select id, 'claimed' as outcome, bound_to from claimed union all select id, 'suppressed', null from suppressed`,
    [ids.map(Number), firstChannel],
  );
  const claimed = new Map(rows.filter((row) => row.outcome === 'claimed').map((row) => [String(row.id), { boundTo: row.bound_to }]));
  return { claimed, suppressed: new Set(rows.filter((row) => row.outcome === 'suppressed').map((row) => String(row.id))) };
}

/** `startAttempts` for one row: whether it is to be sent (and through which configuration alone, if bound), was suppressed, or is already final. */
export async function startAttempt(
  db: Knex,
  id: string | number,
  firstChannel: string | null,
): Promise<{ kind: 'claimed'; boundTo: string | null } | { kind: 'suppressed' } | { kind: 'final' }> {
  const started = await startAttempts(db, [id], firstChannel);
  const claimed = started.claimed.get(String(id));
  if (claimed) return { kind: 'claimed', boundTo: claimed.boundTo };
  return { kind: started.suppressed.size > 0 ? 'suppressed' : 'final' };
}

/** An attempt hands the message to another configuration than the row names: the row says which one may have it now. */
export async function noteSendingThrough(db: Knex, id: string | number, configurationId: string): Promise<void> {
  await db(EMAIL_LOG_TABLE).where({ id, status: 'PENDING' }).update({ sending_through: configurationId });
}

/** A PENDING row's message was taken: SUCCESS, `delivered`, through `sent.channel`. */
export async function markDelivered(db: Knex, id: string | number, sent: { subject: string; missingVariables: string[]; channel: string }): Promise<void> {
  await markAllDelivered(db, [{ id, ...sent }]);
}

/** The delivered rows of one slice of a bulk send (or one single send's), in one statement. */
export async function markAllDelivered(
  db: Knex,
  delivered: ReadonlyArray<{ id: string | number; subject: string; missingVariables: string[]; channel: string }>,
): Promise<void> {
  if (delivered.length === 0) return;
  await preparedRows(
    db,
    'email_log_mark_all_delivered',
    `update ${EMAIL_LOG_TABLE} as log
        set status = 'SUCCESS', delivery_status = 'delivered', channel = sent.channel, sending_through = null, subject = sent.subject, missing_variables = sent.missing::jsonb, error = null, updated_at = now()
       from unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) as sent(id, subject, missing, channel)
      where log.id = sent.id and log.id = any($1::bigint[]) and log.status = 'PENDING'`,
    [
      delivered.map((row) => Number(row.id)),
      delivered.map((row) => row.subject),
      delivered.map((row) => JSON.stringify(row.missingVariables)),
      delivered.map((row) => row.channel),
    ],
  );
}

/**
 * A temporary failure: the row stays PENDING and keeps the reason of its last attempt. A row bound to the
 * configuration a killed attempt was handing it to stays bound (`keepBinding`): that one may still have it.
 */
export async function noteAttemptFailed(db: Knex, id: string | number, reason: string, keepBinding = false): Promise<void> {
  await db(EMAIL_LOG_TABLE)
    .where({ id, status: 'PENDING' })
    .update({ error: reason, updated_at: db.fn.now(), ...(keepBinding ? {} : { sending_through: null }) });
}

/** A PENDING row's end without a delivery: FAILED, with the reason and which failure it was. */
export async function markFailed(
  db: Knex,
  id: string | number,
  reason: string,
  deliveryStatus: Extract<DeliveryStatus, 'temporary-failure' | 'permanent-failure' | 'technical-failure'>,
): Promise<void> {
  await db(EMAIL_LOG_TABLE)
    .where({ id, status: 'PENDING' })
    .update({ status: 'FAILED', delivery_status: deliveryStatus, sending_through: null, error: reason, updated_at: db.fn.now() });
}

/** Up to `limit` PENDING rows of a bulk send after `afterId`, in id order: one chunk's work. */
export async function pendingOfBatch(db: Knex, args: { batchId: string; afterId: string; limit: number }): Promise<EmailLogRow[]> {
  return db<EmailLogRow>(EMAIL_LOG_TABLE)
    .where({ batch_id: args.batchId, status: 'PENDING' })
    .andWhere('id', '>', Number(args.afterId))
    .orderBy('id')
    .limit(args.limit);
}

/** Every PENDING row of a bulk send, with its last reason. */
export async function allPendingOfBatch(db: Knex, batchId: string): Promise<Array<{ id: string; error: string | null }>> {
  return db(EMAIL_LOG_TABLE).where({ batch_id: batchId, status: 'PENDING' }).select('id', 'error');
}

export async function countPendingOfBatch(db: Knex, batchId: string): Promise<number> {
  const { count } = (await db(EMAIL_LOG_TABLE).where({ batch_id: batchId, status: 'PENDING' }).count({ count: '*' }).first()) as { count: string };
  return Number(count);
}

/** Takes back the logs of a send whose workflow could not start (nothing was sent). */
export async function dropSendLogs(db: Knex, args: { logId: string | number } | { batchId: string }): Promise<void> {
  if ('logId' in args) {
    await db(EMAIL_LOG_TABLE).where({ id: args.logId }).delete();
    return;
  }
  await db(EMAIL_LOG_TABLE).where({ batch_id: args.batchId }).delete();
  await db(EMAIL_BATCH_TABLE).where({ batch_id: args.batchId }).delete();
}

/** A template's send logs, newest first, in one status when asked. */
export async function listTemplateLogs(
  db: Knex,
  args: { templateId: string; status?: string; deliveryStatus?: DeliveryStatus; page: PageRequest },
): Promise<Page<EmailLogRow>> {
  const rows = db(EMAIL_LOG_TABLE).select('*').where({ template_id: args.templateId });
  if (args.status) rows.andWhere({ status: args.status });
  if (args.deliveryStatus) rows.andWhere({ delivery_status: args.deliveryStatus });
  return paginate<EmailLogRow>({ query: rows, ...args.page, timeColumn: 'created_at', idColumn: 'id' });
}

/** A FAILED log goes back to PENDING for a retry; false when it was not FAILED. */
export async function reopenFailedLog(db: Knex, id: string | number): Promise<boolean> {
  return (
    (await db(EMAIL_LOG_TABLE)
      .where({ id, status: 'FAILED' })
      .update({ status: 'PENDING', delivery_status: 'created', error: null, updated_at: db.fn.now() })) > 0
  );
}

/** A retry that could not start: the log is FAILED again with its earlier reason. */
export async function restoreFailedLog(db: Knex, args: { id: string | number; error: string | null; deliveryStatus: DeliveryStatus }): Promise<void> {
  await db(EMAIL_LOG_TABLE).where({ id: args.id }).update({ status: 'FAILED', delivery_status: args.deliveryStatus, error: args.error });
}

/** A bulk send's progress: its site, who asked, and how many of its rows are in each status; null for an unknown batch. */
export async function batchProgress(
  db: Knex,
  batchId: string,
): Promise<{ siteId: string; requestedBy: string | null; pending: number; success: number; failed: number } | null> {
  const [row] = await rawRows<{ site_id: string | null; requested_by: string | null; total: number; pending: number; success: number; failed: number }>(
    db,
    `select min(site_id) as site_id, min(requested_by) as requested_by, count(*)::int as total,
            count(*) filter (where status = 'PENDING')::int as pending,
            count(*) filter (where status = 'SUCCESS')::int as success,
            count(*) filter (where status = 'FAILED')::int as failed
     from ${EMAIL_LOG_TABLE} where batch_id = ?`,
    [batchId],
  );
  if (!row || row.total === 0 || row.site_id === null) return null;
  return { siteId: row.site_id, requestedBy: row.requested_by, pending: row.pending, success: row.success, failed: row.failed };
}
