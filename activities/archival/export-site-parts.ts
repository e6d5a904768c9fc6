import crypto from 'node:crypto';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { LOG_TABLES } from '../../data/archival/log-tables';
import { ArchivePartRow, PART_IDS_TABLE, PART_TABLE } from '../../data/archival/parts';
import { archiveFileName, LogType, MAX_ROWS_PER_PART } from '../../workflows/archival/definitions';
import { archivableRowsWhere } from './archivable-rows';
import { ArchivalDeps } from './deps';
import { connectForCopy, copyToCsvFile, stagingFile } from './staging-files';

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
 * that set in id order, each exported by one COPY and its ids recorded as one array over the same
 * predicate. The manifest commits with the export or not at all; a retry after the commit finds the parts
 * it already recorded.
 */
export function exportSiteParts({ db, config }: ArchivalDeps) {
  return async (input: ExportSitePartsInput): Promise<ExportedPart[]> => {
    const recorded = (await db(PART_TABLE)
      .where({ run_id: input.runId, site_id: input.siteId, log_type: input.logType })
      .orderBy('part_no')) as ArchivePartRow[];
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
      // One pass numbers the snapshot's set in id order; each part is a consecutive stretch of it.
      const { rows: stretches } = await client.query<{ first_id: string; last_id: string }>(
        `select min(id) as first_id, max(id) as last_id
           from (select t.id, (row_number() over (order by t.id) - 1) / ${perPart} as stretch from ${table} t where ${where}) numbered
          group by stretch order by stretch`,
      );
      const parts: ExportedPart[] = [];
      let after = 0;
      for (const [index, stretch] of stretches.entries()) {
        const partNo = index + 1;
        const firstId = Number(stretch.first_id);
        const lastId = Number(stretch.last_id);
        const range = `${where} and t.id > ${after} and t.id <= ${lastId}`;
        const partId = crypto.randomUUID();
        const fileName = archiveFileName(input.logType, cutoff, partNo);
        const csv = await copyToCsvFile({ client, select: `select t.* from ${table} t where ${range} order by t.id`, file: stagingFile(config.dataDir, partId) });
        await client.query(
          `insert into ${PART_TABLE} (id, workflow_id, run_id, log_type, site_id, cutoff, part_no, file_name, row_count, min_id, max_id, size_bytes, sha256, state)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 'EXPORTED')`,
          [partId, input.workflowId, input.runId, input.logType, input.siteId, cutoff, partNo, fileName, csv.rowCount, firstId, lastId, csv.sizeBytes, csv.sha256],
        );
        const { rows: recorded } = await client.query<{ n: number }>(
          `insert into ${PART_IDS_TABLE} (part_id, ids) select $1, array_agg(t.id order by t.id) from ${table} t where ${range} returning cardinality(ids) as n`,
          [partId],
        );
        if (recorded[0].n !== csv.rowCount) throw new Error(`part ${partNo} recorded ${recorded[0].n} ids for ${csv.rowCount} exported rows`);
        parts.push({ partId, partNo, fileName, rowCount: csv.rowCount });
        after = lastId;
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
