import { Knex } from 'knex';
import { jsonb } from '../db';
import { DirectoryRecipients, localeOfAddressQuery, recipientsQuery } from '../directory/users';
import { EMAIL_BATCH_TABLE, EMAIL_LOG_TABLE } from './email-logs';

// Bulk and platform sends written as batches: the batch's row, then one PENDING log row per recipient.

/**
 * A batch's rows all carry its batch's `created_at` (bound to the batch id): the log is partitioned by month on
 * it, so the key that sends a batch's recipient once is (batch, recipient, created_at), and one time per
 * batch makes it the (batch, recipient) it was, even for a retry in the next month.
 */
const BATCH_CREATED_AT = `(select b.created_at from ${EMAIL_BATCH_TABLE} b where b.batch_id = ?)`;
/**
 * A directory user `u` the batch (bound) does not have yet. A row written before the log was partitioned
 * carries its own time, not its batch's, so the key above would not find it: this does.
 */
const NOT_YET_IN_BATCH = `not exists (select 1 from ${EMAIL_LOG_TABLE} l where l.batch_id = ? and l.recipient = u.email)`;

/**
 * The batch with its variables, stored once, then one PENDING row per directory user holding `roleKey` in
 * the site, in that user's locale, in one statement (the rows carry no copy of the variables). Keyed by
 * (batch, recipient): repeating it adds no one twice. Answers how many rows the batch has.
 */
export async function insertRoleBatchLogs(
  db: Knex,
  batch: {
    batchId: string;
    siteId: string;
    roleKey: string;
    templateId: string;
    templateRevision: number;
    variables: Record<string, unknown>;
    requestedBy: string;
  },
): Promise<number> {
  await db(EMAIL_BATCH_TABLE)
    .insert({ batch_id: batch.batchId, site_id: batch.siteId, variables: jsonb(db, batch.variables), requested_by: batch.requestedBy })
    .onConflict('batch_id')
    .ignore();
  await db.raw(
    `insert into ${EMAIL_LOG_TABLE} (site_id, template_id, template_revision, batch_id, recipient, locale, variables, requested_by, category, status, created_at)
     select ?, ?, ?, ?, u.email, u.locale, null, ?, 'bulk', 'PENDING', ${BATCH_CREATED_AT}
     from ? u
     where ${NOT_YET_IN_BATCH}
     order by u.email
     on conflict (batch_id, recipient, created_at) where batch_id is not null do nothing`,
    [
      batch.siteId,
      batch.templateId,
      batch.templateRevision,
      batch.batchId,
      batch.requestedBy,
      batch.batchId,
      recipientsQuery(db, { role: batch.roleKey, siteId: batch.siteId }),
      batch.batchId,
    ],
  );
  return batchSize(db, batch.batchId);
}

/** Who a platform email goes to: directory users (the holders of a role in a site, the requester aside; one; several), or addresses named outright. */
export type PlatformRecipients = DirectoryRecipients | { emails: string[] };

/**
 * One platform email (an approval or deploy notice) as a batch: its variables stored once, then one PENDING row
 * per recipient in their own locale, in one statement. Keyed by (batch, recipient): repeating it, or adding a
 * second kind of recipient to the same batch, adds no one twice. Answers how many rows the batch has.
 */
export async function insertPlatformBatchLogs(
  db: Knex,
  batch: { batchId: string; siteId: string; template: string; recipients: PlatformRecipients; variables: Record<string, unknown>; requestedBy: string },
): Promise<number> {
  await db(EMAIL_BATCH_TABLE)
    .insert({ batch_id: batch.batchId, site_id: batch.siteId, variables: jsonb(db, batch.variables), requested_by: batch.requestedBy })
    .onConflict('batch_id')
    .ignore();
  const who = batch.recipients;
  if ('emails' in who) {
    // Addresses named outright: a directory user's own locale where one has the address, English otherwise.
    await db.raw(
      `insert into ${EMAIL_LOG_TABLE} (site_id, platform_template, batch_id, recipient, locale, variables, requested_by, status, created_at)
       select ?, ?, ?, e.address, coalesce(?, 'en'), null, ?, 'PENDING', ${BATCH_CREATED_AT}
       from unnest(?::text[]) as e(address)
       -- Someone the batch already has (a role holder whose address differs only in case) is not mailed twice.
       where not exists (select 1 from ${EMAIL_LOG_TABLE} l where l.batch_id = ? and lower(l.recipient) = lower(e.address))
       order by e.address
       on conflict (batch_id, recipient, created_at) where batch_id is not null do nothing`,
      [batch.siteId, batch.template, batch.batchId, localeOfAddressQuery(db, 'e.address'), batch.requestedBy, batch.batchId, who.emails, batch.batchId],
    );
    return batchSize(db, batch.batchId);
  }
  await db.raw(
    `insert into ${EMAIL_LOG_TABLE} (site_id, platform_template, batch_id, recipient, locale, variables, requested_by, status, created_at)
     select ?, ?, ?, u.email, u.locale, null, ?, 'PENDING', ${BATCH_CREATED_AT}
     from ? u
     where ${NOT_YET_IN_BATCH}
     order by u.email
     on conflict (batch_id, recipient, created_at) where batch_id is not null do nothing`,
    [batch.siteId, batch.template, batch.batchId, batch.requestedBy, batch.batchId, recipientsQuery(db, who), batch.batchId],
  );
  return batchSize(db, batch.batchId);
}

async function batchSize(db: Knex, batchId: string): Promise<number> {
  const { count } = (await db(EMAIL_LOG_TABLE).where({ batch_id: batchId }).count({ count: '*' }).first()) as { count: string };
  return Number(count);
}

/** A bulk send's variables (null for a batch written before batches kept them: its rows carry their own). */
export async function batchVariables(db: Knex, batchId: string): Promise<Record<string, unknown> | null> {
  const batch = await db<{ batch_id: string; variables: Record<string, unknown> }>(EMAIL_BATCH_TABLE).where({ batch_id: batchId }).first('variables');
  return batch?.variables ?? null;
}
