import { Knex } from 'knex';

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
