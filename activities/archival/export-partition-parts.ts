import { Context } from '@temporalio/activity';
import { exportPartsInSnapshot } from '../../data/archival/part-files';
import { advancePartitionArchive, findPartitionArchive } from '../../data/archival/partition-archives';
import { recordedPartitionParts } from '../../data/archival/parts';
import { MAX_ROWS_PER_PART } from '../../domain/archival';
import { ArchivalDeps } from './deps';
import { siteEncoding } from './archive-formats';

export interface ExportPartitionPartsInput {
  partitionArchiveId: string;
  maxRowsPerPart?: number;
}

export interface PartitionPart {
  partId: string;
  siteId: string;
  rowCount: number;
}

/**
 * Exports a month archived whole, site by site, each site's rows in one snapshot read from the month's own
 * table, recording each site's parts with its export (as the row path does). A repeat finds a site's parts
 * recorded and exports it again no more. Only the sites judged expired are exported: a row of any other
 * site written since is found at the drop and put back.
 */
export function exportPartitionParts(deps: ArchivalDeps) {
  const { db, config } = deps;
  return async (input: ExportPartitionPartsInput): Promise<PartitionPart[]> => {
    const archive = await findPartitionArchive(db, input.partitionArchiveId);
    const heartbeat = setInterval(() => Context.current().heartbeat({ stage: 'export' }), 1000);
    try {
      const bySite = new Map<string, PartitionPart[]>();
      const exportSite = async (siteId: string) => {
        let recorded = await recordedPartitionParts(db, { partitionArchiveId: archive.id, siteId });
        if (recorded.length === 0 && archive.state === 'EXPORTING') {
          await exportPartsInSnapshot({
            databaseUrl: config.databaseUrl,
            dataDir: config.dataDir,
            workflowId: archive.workflow_id,
            runId: archive.run_id,
            logType: archive.log_type,
            siteId,
            cutoff: archive.range_to,
            rowsPerPart: Math.min(input.maxRowsPerPart ?? MAX_ROWS_PER_PART, MAX_ROWS_PER_PART),
            partition: { archiveId: archive.id, table: archive.partition_name, from: archive.range_from },
            encoding: await siteEncoding(deps, { logType: archive.log_type, siteId }),
          });
          recorded = await recordedPartitionParts(db, { partitionArchiveId: archive.id, siteId });
        }
        bySite.set(
          siteId,
          recorded.map((part) => ({ partId: part.id, siteId, rowCount: Number(part.row_count) })),
        );
      };
      // Two sites at a time, as the row path's lanes: one site's COPY overlaps another's manifest writes.
      const queue = [...archive.site_ids];
      const lane = async () => {
        for (let siteId = queue.shift(); siteId; siteId = queue.shift()) await exportSite(siteId);
      };
      await Promise.all([lane(), lane()]);
      const parts = archive.site_ids.flatMap((siteId) => bySite.get(siteId) ?? []);
      await advancePartitionArchive(db, { id: archive.id, from: 'EXPORTING', to: 'EXPORTED' });
      return parts;
    } finally {
      clearInterval(heartbeat);
    }
  };
}
