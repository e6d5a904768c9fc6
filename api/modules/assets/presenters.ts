import { Static } from '@sinclair/typebox';
import { AssetRow } from '../../../data/assets/assets';
import { ArchiveStoredSchema } from './schemas';

export function presentArchiveStored(row: AssetRow): Static<typeof ArchiveStoredSchema> {
  return { assetId: row.id, siteId: row.site_id, folder: '/archive', fileName: row.name, sizeBytes: Number(row.size_bytes), sha256: row.sha256 };
}
