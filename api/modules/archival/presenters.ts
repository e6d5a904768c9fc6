import { Static } from '@sinclair/typebox';
import { timestampsOf } from '../../http/common-schemas';
import { ArchivePolicyView } from '../../../data/archival/policies';
import { ArchiveHold } from '../../../data/archival/holds';
import { ArchiveStoreRow } from '../../../data/archival/archive-stores';
import { HoldSchema, PolicySchema, SinkCredentialsSchema } from './schemas';

export function presentPolicy(row: ArchivePolicyView): Static<typeof PolicySchema> {
  return {
    id: row.id,
    logType: row.log_type,
    siteId: row.site_id,
    retentionDays: row.retention_days,
    enabled: row.enabled,
    format: row.format,
    sink: row.sink,
    s3: row.store && {
      endpoint: row.store.endpoint,
      bucket: row.store.bucket,
      prefix: row.s3_prefix,
      region: row.store.region,
      forcePathStyle: row.store.path_style,
      accessKeyId: row.store.access_key_id,
      secretAccessKeySet: row.store.access_key_id !== null,
    },
    ...timestampsOf(row),
  };
}

export function presentHold(hold: ArchiveHold): Static<typeof HoldSchema> {
  return {
    id: hold.id,
    assetId: hold.asset_id,
    siteId: hold.site_id,
    reason: hold.reason,
    heldBy: { id: hold.held_by, name: hold.held_by_name },
    heldAt: hold.held_at.toISOString(),
    released:
      hold.released_at && hold.released_by && hold.release_reason
        ? { by: { id: hold.released_by, name: hold.released_by_name }, at: hold.released_at.toISOString(), reason: hold.release_reason }
        : null,
    refusals: hold.refusals.map((refusal) => ({
      assetId: refusal.asset_id,
      fileName: refusal.file_name,
      by: { id: refusal.refused_by, name: refusal.refused_by_name },
      at: refusal.refused_at.toISOString(),
    })),
  };
}

/** A store's keys as they may be shown: who set them and when, never the secret; null when none are set. */
export function presentStoreKeys(store: ArchiveStoreRow | undefined): Static<typeof SinkCredentialsSchema> | null {
  if (!store?.access_key_id) return null;
  return {
    accessKeyId: store.access_key_id,
    secretAccessKeySet: true,
    updatedBy: store.updated_by,
    updatedByName: store.updated_by_name,
    updatedAt: store.updated_at.toISOString(),
  };
}
