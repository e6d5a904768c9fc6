import { Knex } from 'knex';
import { LogType } from '../../domain/archival';
import { rawRows } from '../db';

/** Where each log type lives. */
export const LOG_TABLES: Record<LogType, string> = {
  SCHEDULER_JOB_LOG: 'settings.scheduler_job_log',
  EMAIL_LOG: 'email.email_log',
  INTEGRATION_LOG: 'integration.integration_log',
};

/** The sites that have rows of a log type: a skip scan over the `(site_id, created_at, id)` index. */
export async function sitesWithRows(db: Knex, args: { logType: LogType; siteId?: string }): Promise<string[]> {
  const table = LOG_TABLES[args.logType];
  if (args.siteId) {
    const row = (await db(table).where({ site_id: args.siteId }).first('id')) as { id: number } | undefined;
    return row ? [args.siteId] : [];
  }
  return sitesInTable(db, table);
}

/** The sites with rows in a log table or one of its partitions (a schema-qualified name), by the same skip scan. */
export async function sitesInTable(db: Knex, table: string): Promise<string[]> {
  const rows = await rawRows<{ site_id: string }>(
    db,
    `with recursive sites as (
       (select site_id from ${table} order by site_id limit 1)
       union all
       select (select t.site_id from ${table} t where t.site_id > sites.site_id order by t.site_id limit 1)
       from sites where sites.site_id is not null
     )
     select site_id from sites where site_id is not null`,
  );
  return rows.map((row) => row.site_id);
}
