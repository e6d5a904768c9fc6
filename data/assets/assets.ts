import { Knex } from 'knex';
import { componentType } from '../content/component-types';
import { deleteComponent } from '../content/components';
import type { Actor } from '../../domain/actor';
import { conflict, PlatformError } from '../../lib/errors';
import { ARCHIVE_FOLDER, isArchiveFolder } from '../../domain/archival';
import { rawRows, serializedOn } from '../db';
import { Page, PageRequest, paginate } from '../paging';
import { recordArchiveDeletion } from './archive-records';
import { isHeldRefusal } from '../archival/holds';

export const ASSET_TABLE = 'assets.asset';

export interface AssetRow {
  id: string;
  site_id: string;
  name: string;
  folder: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
  storage_key: string;
  status: 'DRAFT' | 'PENDING_APPROVAL' | 'PUBLISHED' | 'REJECTED' | 'ARCHIVED';
  published_rev: number | null;
  published_at: Date | null;
  created_by: string | null;
  updated_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export const ASSET_COLUMNS = [
  'id',
  'site_id',
  'name',
  'folder',
  'content_type',
  'size_bytes',
  'sha256',
  'storage_key',
  'status',
  'published_rev',
  'published_at',
  'created_by',
  'updated_by',
  'created_at',
  'updated_at',
];

function assetsQuery(db: Knex): Knex.QueryBuilder {
  return db(ASSET_TABLE).select(ASSET_COLUMNS);
}

/** One asset by id, whatever its status; undefined when there is none. */
export async function findAsset(db: Knex, id: string): Promise<AssetRow | undefined> {
  return (await assetsQuery(db).where({ id }).first()) as AssetRow | undefined;
}

/** The archive file a run stored before with these bytes under this name, if any (an upload repeated). */
export async function findArchiveFile(db: Knex, file: { site_id: string; folder: string; name: string; sha256: string }): Promise<AssetRow | undefined> {
  return (await assetsQuery(db).where(file).first()) as AssetRow | undefined;
}

/**
 * A site's assets, newest first: without a status the published ones (what pickers offer), with one the
 * drafts in that status; `folder` narrows either.
 */
export async function listAssets(db: Knex, args: { siteId: string; folder?: string; status?: string; page: PageRequest }): Promise<Page<AssetRow>> {
  const rows = db(ASSET_TABLE).select('*').where({ site_id: args.siteId });
  if (args.folder) rows.andWhere({ folder: args.folder });
  if (args.status) rows.andWhere({ status: args.status });
  else rows.whereNotNull('published_rev').andWhereNot({ status: 'ARCHIVED' });
  return paginate<AssetRow>({ query: rows, ...args.page, timeColumn: 'created_at', idColumn: 'id' });
}

/**
 * Deletes an asset; an archive file's deletion writes its audit row in the same transaction. Answers
 * whether another asset still points at the same stored bytes (then the file stays).
 */
export async function deleteAsset(db: Knex, args: { asset: AssetRow; actor: Actor }): Promise<{ bytesStillUsed: boolean }> {
  try {
    await db.transaction(async (trx) => {
      if (isArchiveFolder(args.asset.folder)) await recordArchiveDeletion(trx, { asset: args.asset, deletedBy: args.actor });
      await deleteComponent(trx, { type: componentType('ASSET')!, id: args.asset.id, actor: args.actor });
    });
  } catch (error) {
    // A hold set since the route looked: the database refused, and nothing was deleted.
    if (isHeldRefusal(error))
      throw conflict('ARCHIVE_HELD', `Archive file ${args.asset.id} was put under legal hold: no one deletes it until the hold is released.`);
    throw error;
  }
  return { bytesStillUsed: Boolean(await db(ASSET_TABLE).where({ storage_key: args.asset.storage_key }).first('id')) };
}

/**
 * Runs `write` (an upload of `addBytes`) only while the site's files stay within `quotaBytes`; else 413
 * QUOTA_EXCEEDED and nothing is written. Archive files do not count: they are the only copy of pruned rows,
 * and a quota must never stop an archive run. One site's uploads are counted and written one at a time (an
 * advisory lock), so parallel uploads cannot all slip under the quota.
 */
export async function withinSiteQuota<T>(
  db: Knex,
  args: { siteId: string; addBytes: number; quotaBytes: number },
  write: (trx: Knex.Transaction) => Promise<T>,
): Promise<T> {
  return serializedOn(db, `asset-quota:${args.siteId}`, async (trx) => {
    const [used] = await rawRows<{ bytes: number }>(
      trx,
      `select coalesce(sum(size_bytes), 0)::bigint as bytes from ${ASSET_TABLE} where site_id = ? and folder <> ? and folder not like ?`,
      [args.siteId, ARCHIVE_FOLDER, `${ARCHIVE_FOLDER}/%`],
    );
    const usedBytes = Number(used.bytes);
    if (usedBytes + args.addBytes > args.quotaBytes) {
      throw new PlatformError(
        'QUOTA_EXCEEDED',
        `Site ${args.siteId} stores ${usedBytes} of its ${args.quotaBytes} bytes; this file needs ${args.addBytes} more.`,
      );
    }
    return write(trx);
  });
}

export async function assetExists(db: Knex, id: string): Promise<boolean> {
  return (await db(ASSET_TABLE).where({ id }).first('id')) !== undefined;
}
