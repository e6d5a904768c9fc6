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
  /** Null: the platform's sink (ARCHIVE_SINK). */
  sink: 'file' | 's3' | null;
  /** With `s3`: the store (null: the platform's, ARCHIVE_S3_*) and the key prefix (null: the platform's). */
  s3_store_id: string | null;
  s3_prefix: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A policy with what may be shown of its store (never the secret key). */
export interface ArchivePolicyView extends ArchivePolicyRow {
  store: { endpoint: string; bucket: string; region: string; path_style: boolean; access_key_id: string | null } | null;
}

/** What a policy's sink columns are set to: a sink left undefined stays as it is. */
export interface PolicySinkValues {
  sink?: 'file' | 's3' | null;
  s3StoreId?: string | null;
  s3Prefix?: string | null;
}

const sinkColumns = (values: PolicySinkValues) =>
  values.sink === undefined ? {} : { sink: values.sink, s3_store_id: values.s3StoreId ?? null, s3_prefix: values.s3Prefix ?? null };

/** Policies with their store's shown columns, as one relation (a page or a row of it). */
function policyViews(db: Knex): Knex.QueryBuilder {
  const joined = db(`${POLICY_TABLE} as p`)
    .leftJoin('settings.archive_store as s', 's.id', 'p.s3_store_id')
    .select(
      'p.*',
      db.raw(
        "case when s.id is null then null else json_build_object('endpoint', s.endpoint, 'bucket', s.bucket, 'region', s.region, 'path_style', s.path_style, 'access_key_id', s.access_key_id) end as store",
      ),
    );
  return db.select('*').from(joined.as('policy'));
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
export async function listArchivePolicies(db: Knex, args: { logType?: LogType; siteId?: string; page: PageRequest }): Promise<Page<ArchivePolicyView>> {
  const rows = policyViews(db);
  if (args.logType) rows.where({ log_type: args.logType });
  if (args.siteId === 'global') rows.whereNull('site_id');
  else if (args.siteId) rows.where({ site_id: args.siteId });
  return paginate<ArchivePolicyView>({ query: rows, ...args.page, timeColumn: 'created_at', idColumn: 'id' });
}

export async function findArchivePolicy(db: Knex, id: string): Promise<ArchivePolicyView> {
  const row = (await policyViews(db).where({ id }).first()) as ArchivePolicyView | undefined;
  if (!row) throw notFound(`No archive policy ${id}.`);
  return row;
}

/** 409 ARCHIVE_POLICY_EXISTS for a second policy of a log type and site (or a second global one). */
export async function createArchivePolicy(
  db: Knex,
  values: { logType: LogType; siteId: string | null; retentionDays: number; enabled: boolean; format?: ArchiveFormat | null } & PolicySinkValues,
): Promise<ArchivePolicyView> {
  const [row] = (await uniqueOr409(
    () =>
      db(POLICY_TABLE)
        .insert({
          log_type: values.logType,
          site_id: values.siteId,
          retention_days: values.retentionDays,
          enabled: values.enabled,
          format: values.format ?? null,
          ...sinkColumns(values),
        })
        .returning('*'),
    'ARCHIVE_POLICY_EXISTS',
    `A ${values.siteId === null ? 'global' : `site ${values.siteId}`} policy for ${values.logType} exists.`,
  )) as ArchivePolicyRow[];
  return findArchivePolicy(db, row.id);
}

export async function updateArchivePolicy(
  db: Knex,
  id: string,
  values: { retentionDays: number; enabled: boolean; format?: ArchiveFormat | null } & PolicySinkValues,
): Promise<ArchivePolicyView> {
  await findArchivePolicy(db, id);
  await db(POLICY_TABLE)
    .where({ id })
    .update({
      retention_days: values.retentionDays,
      enabled: values.enabled,
      ...(values.format !== undefined ? { format: values.format } : {}),
      ...sinkColumns(values),
      updated_at: db.fn.now(),
    });
  return findArchivePolicy(db, id);
}

/**
 * A policy created or replaced with the sink columns `sinkOf` works out in the same transaction: a store it
 * records goes with the policy, or, when the policy is refused (409, 404), not at all.
 */
export async function savePolicyWithSink(
  db: Knex,
  save: { id?: string; values: Parameters<typeof createArchivePolicy>[1] | Parameters<typeof updateArchivePolicy>[2] },
  sinkOf: (trx: Knex) => Promise<PolicySinkValues>,
): Promise<ArchivePolicyView> {
  return db.transaction(async (trx) => {
    const values = { ...save.values, ...(await sinkOf(trx)) };
    return save.id === undefined ? createArchivePolicy(trx, values as Parameters<typeof createArchivePolicy>[1]) : updateArchivePolicy(trx, save.id, values);
  });
}

export async function deleteArchivePolicy(db: Knex, id: string): Promise<void> {
  if ((await db(POLICY_TABLE).where({ id }).delete()) === 0) throw notFound(`No archive policy ${id}.`);
}
