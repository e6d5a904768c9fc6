import { Static } from '@sinclair/typebox';
import { timestampsOf } from '../../http/common-schemas';
import { ArchivePolicyRow } from '../../../data/archival/policies';
import { PolicySchema } from './schemas';

export function presentPolicy(row: ArchivePolicyRow): Static<typeof PolicySchema> {
  return {
    id: row.id,
    logType: row.log_type,
    siteId: row.site_id,
    retentionDays: row.retention_days,
    enabled: row.enabled,
    ...timestampsOf(row),
  };
}
