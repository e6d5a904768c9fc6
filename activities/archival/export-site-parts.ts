import crypto from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { LOG_TABLES } from '../../data/archival/log-tables';
import { ArchivePartRow, PART_IDS_TABLE, PART_TABLE, recordedParts } from '../../data/archival/parts';
import { archiveFileName, LogType, MAX_ROWS_PER_PART } from '../../domain/archival';
import { archivableRowsWhere } from '../../data/archival/archivable-rows';
import { ArchivalDeps } from './deps';
import { copyCsvParts, takeIdsLiteral } from './csv-parts';
import { connectForCopy, stagingFile } from './staging-files';

export interface ExportSitePartsInput {
  workflowId: string;
  runId: string;
  logType: LogType;
  siteId: string;
  cutoff: string;
  maxRowsPerPart?: number;
}

export interface ExportedPart {
  partId: string;
  partNo: number;
  fileName: string;
  rowCount: number;
}

const present = (part: Pick<ArchivePartRow, 'id' | 'part_no' | 'file_name' | 'row_count'>): ExportedPart => ({
  partId: part.id,
  partNo: part.part_no,
  fileName: part.file_name,
  rowCount: Number(part.row_count),
});

/**
 * Exports one site's archivable rows as CSV parts and records the manifest, all in one REPEATABLE READ
 * snapshot: the rows exported are exactly the rows the snapshot sees (a transaction still open keeps its
 * rows out, whatever their ids), and each part records the ids it holds. Parts are consecutive stretches of
 * that set in id order, cut from one COPY as it streams, each with the ids it holds recorded as one array.
 * The manifest commits with the export or not at all; a retry after the commit finds the parts it already
 * recorded.
 */
export function exportSiteParts({ db, config }: ArchivalDeps) {
  return async (input: ExportSitePartsInput): Promise<ExportedPart[]> => {
    const recorded = await recordedParts(db, input);
    if (recorded.length > 0) return recorded.map(present);

    const perPart = input.maxRowsPerPart ?? MAX_ROWS_PER_PART;
    if (!Number.isInteger(perPart) || perPart < 1 || perPart > MAX_ROWS_PER_PART) {
      throw ApplicationFailure.nonRetryable(`maxRowsPerPart must be an integer from 1 to ${MAX_ROWS_PER_PART}`, 'INVALID_PART_SIZE');
    }
    const table = LOG_TABLES[input.logType];
    const cutoff = new Date(input.cutoff);
    const client = await connectForCopy(config.databaseUrl);
    const heartbeat = setInterval(() => Context.current().heartbeat({ stage: 'export' }), 5000);
    try {
      await client.query('begin isolation level repeatable read');
      // COPY takes no parameters: the literals are escaped by the driver.
      const where = archivableRowsWhere(input.logType, {
        siteId: client.escapeLiteral(input.siteId),
        cutoff: `${client.escapeLiteral(cutoff.toISOString())}::timestamptz`,
      });
      // One COPY of the snapshot's set in id order, cut into parts as it streams.
      const partIds: string[] = [];
      const nextFile = () => {
        const partId = crypto.randomUUID();
        partIds.push(partId);
        return stagingFile(config.dataDir, partId);
      };
      const staged = await copyCsvParts({ client, select: `select t.* from ${table} t where ${where} order by t.id`, rowsPerPart: perPart, nextFile, recordIds: true });

      const parts: ExportedPart[] = [];
      for (const [index, csv] of staged.entries()) {
        const partNo = index + 1;
        const partId = partIds[index];
        const fileName = archiveFileName(input.logType, cutoff, partNo);
        await client.query(
          `insert into ${PART_TABLE} (id, workflow_id, run_id, log_type, site_id, cutoff, part_no, file_name, row_count, min_id, max_id, size_bytes, sha256, state)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 'EXPORTED')`,
          [partId, input.workflowId, input.runId, input.logType, input.siteId, cutoff, partNo, fileName, csv.rowCount, csv.firstId, csv.lastId, csv.sizeBytes, csv.sha256],
        );
        const { rows: recorded } = await client.query<{ n: number }>(
          `insert into ${PART_IDS_TABLE} (part_id, ids) values ($1, $2::bigint[]) returning cardinality(ids) as n`,
          [partId, await takeIdsLiteral(csv)],
        );
        if (recorded[0].n !== csv.rowCount) throw new Error(`part ${partNo} recorded ${recorded[0].n} ids for ${csv.rowCount} exported rows`);
        parts.push({ partId, partNo, fileName, rowCount: csv.rowCount });
      }
      await client.query('commit');
      return parts;
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      clearInterval(heartbeat);
      await client.end();
    }
  };
}
