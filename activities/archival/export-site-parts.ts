import { Context } from '@temporalio/activity';
import { finalFailure } from '../failures';
import { ExportedPartRecord, exportPartsInSnapshot } from '../../data/archival/part-files';
import { ArchivePartRow, recordedParts } from '../../data/archival/parts';
import { LogType, MAX_ROWS_PER_PART } from '../../domain/archival';
import { ArchivalDeps } from './deps';
import { siteEncoding } from './archive-formats';

export interface ExportSitePartsInput {
  workflowId: string;
  runId: string;
  logType: LogType;
  siteId: string;
  cutoff: string;
  maxRowsPerPart?: number;
}

/** A part as the run carries it on: its id, number, file name and rows. */
export type ExportedPart = ExportedPartRecord;

const present = (part: Pick<ArchivePartRow, 'id' | 'part_no' | 'file_name' | 'row_count'>): ExportedPart => ({
  partId: part.id,
  partNo: part.part_no,
  fileName: part.file_name,
  rowCount: Number(part.row_count),
});

/**
 * Exports one site's archivable rows as parts (CSV, or Parquet by the site's policy) and records the manifest, all in one REPEATABLE READ
 * snapshot: the rows exported are exactly the rows the snapshot sees (a transaction still open keeps its
 * rows out, whatever their ids), and each part records the ids it holds. Parts are consecutive stretches of
 * that set in id order, cut from one COPY as it streams, each with the ids it holds recorded as one array.
 * The manifest commits with the export or not at all; a retry after the commit finds the parts it already
 * recorded.
 */
export function exportSiteParts(deps: ArchivalDeps) {
  const { db, config } = deps;
  return async (input: ExportSitePartsInput): Promise<ExportedPart[]> => {
    const recorded = await recordedParts(db, input);
    if (recorded.length > 0) return recorded.map(present);

    const perPart = input.maxRowsPerPart ?? MAX_ROWS_PER_PART;
    if (!Number.isInteger(perPart) || perPart < 1 || perPart > MAX_ROWS_PER_PART) {
      throw finalFailure('INVALID_PART_SIZE', `maxRowsPerPart must be an integer from 1 to ${MAX_ROWS_PER_PART}`);
    }
    const heartbeat = setInterval(() => Context.current().heartbeat({ stage: 'export' }), 5000);
    try {
      return await exportPartsInSnapshot({
        ...input,
        databaseUrl: config.databaseUrl,
        dataDir: config.dataDir,
        cutoff: new Date(input.cutoff),
        rowsPerPart: perPart,
        encoding: await siteEncoding(deps, input),
      });
    } finally {
      clearInterval(heartbeat);
    }
  };
}
