import { Knex } from 'knex';
import { EmailCategory, SuppressionReason } from '../../domain/messaging';
import { Page, PageRequest, paginate } from '../paging';

export const SUPPRESSION_TABLE = 'email.suppression';
export const UNSUBSCRIPTION_TABLE = 'email.unsubscription';

export interface SuppressionRow {
  id: string;
  site_id: string;
  /** Lower case: the list matches an address whatever its case. */
  address: string;
  reason: SuppressionReason;
  detail: string | null;
  /** The email log row whose bounce or complaint put it there. */
  log_id: string | null;
  created_at: Date;
  lifted_at: Date | null;
  lifted_by: string | null;
}

/** Puts an address on a site's suppression list; one already there stays as it was. */
export async function suppressAddress(
  db: Knex,
  entry: { siteId: string; address: string; reason: SuppressionReason; detail: string | null; logId: string | number | null },
): Promise<void> {
  await db.raw(
    `insert into ${SUPPRESSION_TABLE} (site_id, address, reason, detail, log_id) values (?, lower(?), ?, ?, ?)
     on conflict (site_id, address) where lifted_at is null do nothing`,
    [entry.siteId, entry.address, entry.reason, entry.detail, entry.logId === null ? null : Number(entry.logId)],
  );
}

/** A site's suppression list, newest first: the entries in force, or with `lifted` those lifted too. */
export async function listSuppressions(db: Knex, args: { siteId: string; lifted: boolean; page: PageRequest }): Promise<Page<SuppressionRow>> {
  const rows = db(SUPPRESSION_TABLE).select('*').where({ site_id: args.siteId });
  if (!args.lifted) rows.whereNull('lifted_at');
  return paginate<SuppressionRow>({ query: rows, ...args.page, timeColumn: 'created_at', idColumn: 'id' });
}

export async function findSuppression(db: Knex, id: string): Promise<SuppressionRow | undefined> {
  return db<SuppressionRow>(SUPPRESSION_TABLE).where({ id }).first();
}

/** Lifts an entry in force: the address may be sent to again; the entry stays, with who lifted it and when. */
export async function liftSuppression(db: Knex, args: { id: string; by: string }): Promise<SuppressionRow | undefined> {
  const [row] = (await db(SUPPRESSION_TABLE)
    .where({ id: args.id })
    .whereNull('lifted_at')
    .update({ lifted_at: db.fn.now(), lifted_by: args.by })
    .returning('*')) as SuppressionRow[];
  return row;
}

/** The address leaves the category in the site (a one-click unsubscribe); doing it again changes nothing. */
export async function unsubscribeAddress(
  db: Knex,
  grant: { siteId: string; address: string; category: Exclude<EmailCategory, 'transactional'> },
): Promise<void> {
  await db.raw(`insert into ${UNSUBSCRIPTION_TABLE} (site_id, address, category) values (?, lower(?), ?) on conflict do nothing`, [
    grant.siteId,
    grant.address,
    grant.category,
  ]);
}
