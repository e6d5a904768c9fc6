import { Static } from '@sinclair/typebox';
import { ArchivePolicyRow } from '../../../data/archival/policies';
import { PolicySchema } from './schemas';

export function presentPolicy(row: ArchivePolicyRow): Static<typeof PolicySchema> {
  return {
    id: row.id,
    logType: row.log_type,
    siteId: row.site_id,
    retentionDays: row.retention_days,
    enabled: row.enabled,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}
