import { Knex } from 'knex';
import { EMAIL_LOG_TABLE, EmailLogRow } from './email-logs';
import { suppressAddress } from './suppressions';

/**
 * A delivery report (RFC 3464) for a sent message: a hard bounce makes its row FAILED `permanent-failure`
 * and suppresses the address in its site; a soft one makes it FAILED `temporary-failure`. One transaction;
 * the same report twice changes nothing more. Answers the row, or undefined for an unknown one.
 */
export async function recordBounce(db: Knex, report: { logId: string; hard: boolean; detail: string }): Promise<EmailLogRow | undefined> {
  return db.transaction(async (trx) => {
    const [row] = (await trx(EMAIL_LOG_TABLE)
      .where({ id: Number(report.logId) })
      .update({ status: 'FAILED', delivery_status: report.hard ? 'permanent-failure' : 'temporary-failure', error: report.detail, updated_at: trx.fn.now() })
      .returning('*')) as EmailLogRow[];
    if (row && report.hard)
      await suppressAddress(trx, { siteId: row.site_id, address: row.recipient, reason: 'hard-bounce', detail: report.detail, logId: row.id });
    return row;
  });
}

/** A complaint (an ARF report, RFC 5965) about a sent message: its address is suppressed in its site at once. */
export async function recordComplaint(db: Knex, report: { logId: string; detail: string }): Promise<EmailLogRow | undefined> {
  return db.transaction(async (trx) => {
    const row = await trx<EmailLogRow>(EMAIL_LOG_TABLE)
      .where({ id: Number(report.logId) })
      .first();
    if (row) await suppressAddress(trx, { siteId: row.site_id, address: row.recipient, reason: 'complaint', detail: report.detail, logId: row.id });
    return row;
  });
}
