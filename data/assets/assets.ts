import { Knex } from 'knex';
import { componentType } from '../content/component-types';
import { deleteComponent } from '../content/components';
import { Actor } from '../content/revisions';
import { Page, PageRequest, paginate } from '../paging';
import { isArchiveFolder, recordArchiveDeletion } from './archive-records';

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
  'id', 'site_id', 'name', 'folder', 'content_type', 'size_bytes', 'sha256', 'storage_key', 'status',
  'published_rev', 'published_at', 'created_by', 'updated_by', 'created_at', 'updated_at',
];

export function assetsQuery(db: Knex): Knex.QueryBuilder {
  return db(ASSET_TABLE).select(ASSET_COLUMNS);
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
  await db.transaction(async (trx) => {
    if (isArchiveFolder(args.asset.folder)) await recordArchiveDeletion(trx, { asset: args.asset, deletedBy: args.actor });
    await deleteComponent(trx, { type: componentType('ASSET')!, id: args.asset.id, actor: args.actor });
  });
  return { bytesStillUsed: Boolean(await db(ASSET_TABLE).where({ storage_key: args.asset.storage_key }).first('id')) };
}
