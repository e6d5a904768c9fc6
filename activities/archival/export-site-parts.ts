import crypto from 'node:crypto';
import { Context } from '@temporalio/activity';
import { LOG_TABLES } from '../../data/archival/log-tables';
import { ArchivePartRow, PART_ROW_TABLE, PART_TABLE } from '../../data/archival/parts';
import { archiveFileName, LogType, MAX_ROWS_PER_PART } from '../../workflows/archival/definitions';
import { archivableRowsSql } from './archivable-rows';
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
 * rows out, whatever their ids), and each part records the ids it holds. The manifest commits with the
 * export or not at all; a retry after the commit finds the parts it already recorded.
 */
export function exportSiteParts({ db, config }: ArchivalDeps) {
  return async (input: ExportSitePartsInput): Promise<ExportedPart[]> => {
    const recorded = (await db(PART_TABLE)
      .where({ run_id: input.runId, site_id: input.siteId, log_type: input.logType })
      .orderBy('part_no')) as ArchivePartRow[];
    if (recorded.length > 0) return recorded.map(present);

    const perPart = input.maxRowsPerPart ?? MAX_ROWS_PER_PART;
    const table = LOG_TABLES[input.logType];
    const cutoff = new Date(input.cutoff);
    const client = await connectForCopy(config.databaseUrl);
    const heartbeat = setInterval(() => Context.current().heartbeat({ stage: 'export' }), 5000);
    try {
      await client.query('begin isolation level repeatable read');
      const selection = archivableRowsSql(input.logType, { siteId: '$1', cutoff: '$2' });
      await client.query(
        `create temp table export_rows on commit drop as
           select id, ((row_number() over (order by id)) - 1) / ${perPart} + 1 as part_no from (${selection}) a`,
        [input.siteId, cutoff],
      );
      const { rows: summary } = await client.query<{ part_no: number; row_count: string; min_id: string; max_id: string }>(
        'select part_no, count(*) as row_count, min(id) as min_id, max(id) as max_id from export_rows group by part_no order by part_no',
      );
      const parts: ExportedPart[] = [];
      for (const partSummary of summary) {
        const partId = crypto.randomUUID();
        const partNo = Number(partSummary.part_no);
        const fileName = archiveFileName(input.logType, cutoff, partNo);
        const csv = await copyToCsvFile({
          client,
          select: `select t.* from ${table} t join export_rows e on e.id = t.id where e.part_no = ${partNo} order by t.id`,
          file: stagingFile(config.dataDir, partId),
        });
        await client.query(
          `insert into ${PART_TABLE} (id, workflow_id, run_id, log_type, site_id, cutoff, part_no, file_name, row_count, min_id, max_id, size_bytes, sha256, state)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 'EXPORTED')`,
          [partId, input.workflowId, input.runId, input.logType, input.siteId, cutoff, partNo, fileName, partSummary.row_count, partSummary.min_id, partSummary.max_id, csv.sizeBytes, csv.sha256],
        );
        await client.query(`insert into ${PART_ROW_TABLE} (part_id, row_id) select $1, id from export_rows where part_no = $2`, [partId, partNo]);
        parts.push({ partId, partNo, fileName, rowCount: Number(partSummary.row_count) });
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
