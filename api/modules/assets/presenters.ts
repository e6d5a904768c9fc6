import { Static } from '@sinclair/typebox';
import { AssetRow } from '../../../data/assets/assets';
import { ArchiveStoredSchema, AssetSchema } from './schemas';

const iso = (value: Date | null) => (value === null ? null : new Date(value).toISOString());

export function presentAsset(row: AssetRow): Static<typeof AssetSchema> {
  return {
    id: row.id,
    siteId: row.site_id,
    name: row.name,
    folder: row.folder,
    contentType: row.content_type,
    sizeBytes: Number(row.size_bytes),
    sha256: row.sha256,
    status: row.status,
    publishedRev: row.published_rev,
    publishedAt: iso(row.published_at),
    createdAt: iso(row.created_at) as string,
    updatedAt: iso(row.updated_at) as string,
  };
}

export function presentArchiveStored(row: AssetRow): Static<typeof ArchiveStoredSchema> {
  return { assetId: row.id, siteId: row.site_id, folder: '/archive', fileName: row.name, sizeBytes: Number(row.size_bytes), sha256: row.sha256 };
}
