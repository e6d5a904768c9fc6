import { LOG_TABLES } from '../../data/archival/log-tables';
import { LogType } from '../../domain/archival';
import { ArchivalDeps } from './deps';

export interface ListSitesWithRowsInput {
  logType: LogType;
  siteId?: string;
}

/** The sites that have rows of this log type: a skip scan over the `(site_id, created_at, id)` index. */
export function listSitesWithRows({ db }: ArchivalDeps) {
  return async (input: ListSitesWithRowsInput): Promise<string[]> => {
    const table = LOG_TABLES[input.logType];
    if (input.siteId) {
      const row = await db(table).where({ site_id: input.siteId }).first('id');
      return row ? [input.siteId] : [];
    }
    const { rows } = await db.raw(
      `with recursive sites as (
         (select site_id from ${table} order by site_id limit 1)
         union all
         select (select t.site_id from ${table} t where t.site_id > sites.site_id order by t.site_id limit 1)
         from sites where sites.site_id is not null
       )
       select site_id from sites where site_id is not null`,
    );
    return (rows as { site_id: string }[]).map((row) => row.site_id);
  };
}
