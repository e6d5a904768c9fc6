import crypto from 'node:crypto';
import { Context } from '@temporalio/activity';
import { LOG_TABLES } from '../../data/archival/log-tables';
import { ArchivePartRow, PART_ROW_TABLE, PART_TABLE } from '../../data/archival/parts';
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
 * that set in id order, each exported by one COPY and recorded by one INSERT over the same predicate. The manifest commits with the
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
      // COPY takes no parameters: the literals are escaped by the driver.
      const where = archivableRowsWhere(input.logType, {
        siteId: client.escapeLiteral(input.siteId),
        cutoff: `${client.escapeLiteral(cutoff.toISOString())}::timestamptz`,
      });
      const { rows: totals } = await client.query<{ n: string }>(`select count(*) as n from ${table} t where ${where}`);
      const total = Number(totals[0].n);
      const parts: ExportedPart[] = [];
      let after = 0;
      for (let partNo = 1; (partNo - 1) * perPart < total; partNo++) {
        // Parts are consecutive id ranges of the snapshot's set: the last id of each bounds the next.
        const { rows: bounds } = await client.query<{ first_id: string; last_id: string }>(
          `select min(id) as first_id, max(id) as last_id from (select t.id from ${table} t where ${where} and t.id > ${after} order by t.id limit ${perPart}) a`,
        );
        const firstId = Number(bounds[0].first_id);
        const lastId = Number(bounds[0].last_id);
        const range = `${where} and t.id > ${after} and t.id <= ${lastId}`;
        const partId = crypto.randomUUID();
        const fileName = archiveFileName(input.logType, cutoff, partNo);
        const csv = await copyToCsvFile({ client, select: `select t.* from ${table} t where ${range} order by t.id`, file: stagingFile(config.dataDir, partId) });
        await client.query(
          `insert into ${PART_TABLE} (id, workflow_id, run_id, log_type, site_id, cutoff, part_no, file_name, row_count, min_id, max_id, size_bytes, sha256, state)
           values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 'EXPORTED')`,
          [partId, input.workflowId, input.runId, input.logType, input.siteId, cutoff, partNo, fileName, csv.rowCount, firstId, lastId, csv.sizeBytes, csv.sha256],
        );
        const staged = await client.query(`insert into ${PART_ROW_TABLE} (part_id, row_id) select $1, t.id from ${table} t where ${range}`, [partId]);
        if (staged.rowCount !== csv.rowCount) throw new Error(`part ${partNo} recorded ${staged.rowCount} ids for ${csv.rowCount} exported rows`);
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
