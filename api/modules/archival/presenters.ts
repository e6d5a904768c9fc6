import { Static } from '@sinclair/typebox';
import { timestampsOf } from '../../http/common-schemas';
import { ArchivePolicyRow } from '../../../data/archival/policies';
import { ArchiveHold } from '../../../data/archival/holds';
import { SinkCredentialsSummary } from '../../../data/archival/sink-credentials';
import { HoldSchema, PolicySchema, SinkCredentialsSchema } from './schemas';

export function presentPolicy(row: ArchivePolicyRow): Static<typeof PolicySchema> {
  return {
    id: row.id,
    logType: row.log_type,
    siteId: row.site_id,
    retentionDays: row.retention_days,
    enabled: row.enabled,
    format: row.format,
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

export function presentSinkCredentials(summary: SinkCredentialsSummary): Static<typeof SinkCredentialsSchema> {
  return {
    accessKeyId: summary.accessKeyId,
    secretAccessKeySet: true,
    updatedBy: summary.updatedBy,
    updatedByName: summary.updatedByName,
    updatedAt: summary.updatedAt.toISOString(),
  };
}
