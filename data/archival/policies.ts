import { Knex } from 'knex';
import { ArchiveFormat, LogType } from '../../domain/archival';
import { notFound } from '../../lib/errors';
import { uniqueOr409 } from '../db-errors';
import { Page, PageRequest, paginate } from '../paging';

export const POLICY_TABLE = 'settings.archive_policy';

export interface ArchivePolicyRow {
  id: string;
  log_type: LogType;
  site_id: string | null;
  retention_days: number;
  enabled: boolean;
  /** Null: the platform's format (ARCHIVE_FORMAT). */
  format: ArchiveFormat | null;
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

/**
 * The format a site's archive files are written in: its own policy's, else the global one's, else the
 * platform's (`fallback`, ARCHIVE_FORMAT). A policy that names no format passes the choice on.
 */
export async function resolveArchiveFormat(db: Knex, args: { logType: LogType; siteId: string; fallback: ArchiveFormat }): Promise<ArchiveFormat> {
  const rows = (await db(POLICY_TABLE)
    .where({ log_type: args.logType })
    .andWhere((q) => q.where({ site_id: args.siteId }).orWhereNull('site_id'))) as ArchivePolicyRow[];
  return rows.find((row) => row.site_id === args.siteId)?.format ?? rows.find((row) => row.site_id === null)?.format ?? args.fallback;
}

/** Retention policies, newest first: of one log type, and global (`siteId` 'global') or of one site, when asked. */
export async function listArchivePolicies(db: Knex, args: { logType?: LogType; siteId?: string; page: PageRequest }): Promise<Page<ArchivePolicyRow>> {
  const rows = db(POLICY_TABLE).select('*');
  if (args.logType) rows.where({ log_type: args.logType });
  if (args.siteId === 'global') rows.whereNull('site_id');
  else if (args.siteId) rows.where({ site_id: args.siteId });
  return paginate<ArchivePolicyRow>({ query: rows, ...args.page, timeColumn: 'created_at', idColumn: 'id' });
}

export async function findArchivePolicy(db: Knex, id: string): Promise<ArchivePolicyRow> {
  const row = (await db(POLICY_TABLE).where({ id }).first()) as ArchivePolicyRow | undefined;
  if (!row) throw notFound(`No archive policy ${id}.`);
  return row;
}

/** 409 ARCHIVE_POLICY_EXISTS for a second policy of a log type and site (or a second global one). */
export async function createArchivePolicy(
  db: Knex,
  values: { logType: LogType; siteId: string | null; retentionDays: number; enabled: boolean; format?: ArchiveFormat | null },
): Promise<ArchivePolicyRow> {
  const [row] = (await uniqueOr409(
    () =>
      db(POLICY_TABLE)
        .insert({
          log_type: values.logType,
          site_id: values.siteId,
          retention_days: values.retentionDays,
          enabled: values.enabled,
          format: values.format ?? null,
        })
        .returning('*'),
    'ARCHIVE_POLICY_EXISTS',
    `A ${values.siteId === null ? 'global' : `site ${values.siteId}`} policy for ${values.logType} exists.`,
  )) as ArchivePolicyRow[];
  return row;
}

export async function updateArchivePolicy(
  db: Knex,
  id: string,
  values: { retentionDays: number; enabled: boolean; format?: ArchiveFormat | null },
): Promise<ArchivePolicyRow> {
  await findArchivePolicy(db, id);
  const [row] = (await db(POLICY_TABLE)
    .where({ id })
    .update({
      retention_days: values.retentionDays,
      enabled: values.enabled,
      ...(values.format !== undefined ? { format: values.format } : {}),
      updated_at: db.fn.now(),
    })
    .returning('*')) as ArchivePolicyRow[];
  return row;
}

export async function deleteArchivePolicy(db: Knex, id: string): Promise<void> {
  if ((await db(POLICY_TABLE).where({ id }).delete()) === 0) throw notFound(`No archive policy ${id}.`);
}
