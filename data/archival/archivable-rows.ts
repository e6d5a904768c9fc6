import { Knex } from 'knex';
import { rawRows } from '../db';
import { LOG_TABLES } from './log-tables';
import { PART_IDS_TABLE, PART_TABLE } from './parts';
import { LogType } from '../../domain/archival';

/**
 * The rows a run archives for one site: older than the cutoff, and not already held by a part of an earlier
 * run that is not finished yet (those are finished first, never exported twice). The held ids are the
 * site's unfinished parts' arrays, so PostgreSQL answers with one hash anti-join, empty when nothing is held.
 */
export function archivableRowsWhere(logType: LogType, placeholders: { siteId: string; cutoff: string }): string {
  return `t.site_id = ${placeholders.siteId} and t.created_at < ${placeholders.cutoff}
      and not exists (
        select 1 from ${PART_TABLE} p join ${PART_IDS_TABLE} held on held.part_id = p.id cross join unnest(held.ids) as u(id)
        where u.id = t.id and p.log_type = '${logType}' and p.site_id = ${placeholders.siteId} and p.state <> 'DELETED'
      )`;
}

export function archivableRowsSql(logType: LogType, placeholders: { siteId: string; cutoff: string }): string {
  return `select t.id from ${LOG_TABLES[logType]} t where ${archivableRowsWhere(logType, placeholders)}`;
}

/** How many rows of a site a run would archive now (a dry run's answer). Reads only. */
export async function countArchivableRows(db: Knex, args: { logType: LogType; siteId: string; cutoff: string }): Promise<number> {
  const archivable = archivableRowsSql(args.logType, { siteId: ':siteId', cutoff: 'cast(:cutoff as timestamptz)' });
  const [counted] = await rawRows<{ n: number }>(db, `select count(*) as n from (${archivable}) a`, { siteId: args.siteId, cutoff: args.cutoff });
  return Number(counted.n);
}
