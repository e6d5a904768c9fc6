import { Knex } from 'knex';
import { EMAIL_LOG_TABLE, EmailLogRow } from './email-logs';
import { suppressAddress } from './suppressions';

/**
 * A delivery report (RFC 3464) for a sent message: a hard bounce makes its row FAILED `permanent-failure`
 * and suppresses the address in its site; a soft one makes it FAILED `temporary-failure`, unless it is
 * worse already. A row still PENDING (a report outran its record) ends too, so no retry mails a dead
 * address again. One transaction; the same report twice changes nothing more. Answers the row, or
 * undefined for an unknown one.
 */
export async function recordBounce(db: Knex, report: { logId: string; hard: boolean; detail: string }): Promise<EmailLogRow | undefined> {
  return db.transaction(async (trx) => {
    // A report changes a row it can make worse only: a soft bounce never undoes a hard one.
    const unchanged = report.hard ? ['permanent-failure', 'suppressed'] : ['permanent-failure', 'temporary-failure', 'suppressed'];
    const [updated] = (await trx(EMAIL_LOG_TABLE)
      .where({ id: Number(report.logId) })
      .whereNotIn('delivery_status', unchanged)
      .update({
        status: 'FAILED',
        delivery_status: report.hard ? 'permanent-failure' : 'temporary-failure',
        sending_through: null,
        error: report.detail,
        updated_at: trx.fn.now(),
      })
      .returning('*')) as EmailLogRow[];
    const row =
      updated ??
      (await trx<EmailLogRow>(EMAIL_LOG_TABLE)
        .where({ id: Number(report.logId) })
        .first());
    // Only the report that fails the message suppresses: a replay of it after an ADMIN lifted the entry does not.
    if (updated && report.hard)
      await suppressAddress(trx, { siteId: updated.site_id, address: updated.recipient, reason: 'hard-bounce', detail: report.detail, logId: updated.id });
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
