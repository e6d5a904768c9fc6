import { Knex } from 'knex';
import { LogType } from '../../domain/archival';

export const POLICY_TABLE = 'settings.archive_policy';

export interface ArchivePolicyRow {
  id: string;
  log_type: LogType;
  site_id: string | null;
  retention_days: number;
  enabled: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface ResolvedRetention {
  enabled: boolean;
  retentionDays: number | null;
  source: 'SITE' | 'GLOBAL' | 'NONE';
}

/** The site's policy if one exists (enabled or not), else the global one, else none. */
export async function resolveRetention(db: Knex, logType: LogType, siteId: string): Promise<ResolvedRetention> {
  const rows = (await db(POLICY_TABLE)
    .where({ log_type: logType })
    .andWhere((q) => q.where({ site_id: siteId }).orWhereNull('site_id'))) as ArchivePolicyRow[];
  const site = rows.find((row) => row.site_id === siteId);
  if (site) return { enabled: site.enabled, retentionDays: site.retention_days, source: 'SITE' };
  const global = rows.find((row) => row.site_id === null);
  if (global) return { enabled: global.enabled, retentionDays: global.retention_days, source: 'GLOBAL' };
  return { enabled: false, retentionDays: null, source: 'NONE' };
}
