import crypto from 'node:crypto';
import fs from 'node:fs';
import { ArchiveFormat, archiveFileName, archivePartitionFileName, LogType, MAX_ROWS_PER_PART } from '../../domain/archival';
import { archivableRowsWhere } from './archivable-rows';
import { copyCsvParts, CsvPart, takeIdsLiteral } from './csv-parts';
import { LOG_TABLES } from './log-tables';
import { ArchivePartRow, EncoderSettings, PART_IDS_TABLE, PART_TABLE } from './parts';
import { PARTITION_ARCHIVE_TABLE } from './partition-archives';
import { connectForCopy, stagingFile } from './staging-files';

/**
 * Turns a part's CSV into the file archived in another format: writes `target` from the CSV, always the
 * same bytes for the same CSV and settings (a part written again must hash as it did), proven to hold the
 * CSV's rows, removes the CSV, and answers the target's size, sha256 and the settings it was written with.
 * `recorded`: a part written again, with the settings recorded for it (null: recorded before parts kept
 * them); absent for a new part, which takes today's. Null: this CSV cannot be encoded, and is left as it is
 * (the export keeps that part as CSV).
 */
export interface PartEncoding {
  format: Exclude<ArchiveFormat, 'csv'>;
  encode(
    csv: Pick<CsvPart, 'file' | 'sha256' | 'rowCount'>,
    target: string,
    recorded?: EncoderSettings | null,
  ): Promise<{ sizeBytes: number; sha256: string; settings: EncoderSettings } | null>;
}

export interface ExportedPartRecord {
  partId: string;
  partNo: number;
  fileName: string;
  rowCount: number;
}

/** One site's export: where its rows come from and go, and for which run. */
export interface PartExport {
  databaseUrl: string;
  dataDir: string;
  workflowId: string;
  runId: string;
  logType: LogType;
  siteId: string;
  cutoff: Date;
  rowsPerPart: number;
  /** A month archived whole: its rows of the site are read from its own table, and its parts are marked with its archive. */
  partition?: { archiveId: string; table: string; from: Date };
  /** How each part's CSV becomes the file archived (Parquet); none: the CSV is the file. */
  encoding?: PartEncoding;
}

/**
 * Exports one site's archivable rows as CSV parts into the staging folder and records the manifest, all in
 * one REPEATABLE READ snapshot: the rows exported are exactly the rows the snapshot sees (a transaction
 * still open keeps its rows out, whatever their ids), and each part records the ids it holds. Parts are
 * consecutive stretches of that set in id order, cut from one COPY as it streams. The manifest commits
 * with the export or not at all.
 */
export async function exportPartsInSnapshot(args: PartExport): Promise<ExportedPartRecord[]> {
  const table = args.partition?.table ?? LOG_TABLES[args.logType];
  const client = await connectForCopy(args.databaseUrl);
  const partIds: string[] = [];
  let exportSnapshot: string | null = null;
  try {
    await client.query('begin isolation level repeatable read');
    // A run exports two sites at a time: that is its parallelism. Parallel workers inside each COPY only
    // fight the other site's COPY and the worker for the same cores, and the sort by id of a site's month
    // (about 100 MB at 250,000 rows) spills to disk at the default work_mem. Measured on one 2.5M-row month
    // on 2 cores (decision 029): 13.9–15.5 s without both against 17.9–18.2 s with them.
    await client.query('set local max_parallel_workers_per_gather = 0');
    await client.query(`set local work_mem = '64MB'`);
    if (args.partition) {
      // Held until the commit: a month's archive moves past EXPORTING only after every export that began under it.
      const { rows } = await client.query<{ state: string }>(`select state from ${PARTITION_ARCHIVE_TABLE} where id = $1 for share`, [
        args.partition.archiveId,
      ]);
      if (rows[0]?.state !== 'EXPORTING')
        throw new Error(`the month's archive ${args.partition.archiveId} is ${rows[0]?.state ?? 'gone'}: nothing more is exported into it`);
      // The snapshot every statement of this export reads (REPEATABLE READ): its parts record it, and the drop
      // tells a late row by its writer not being visible in it.
      const { rows: taken } = await client.query<{ snapshot: string }>('select pg_current_snapshot()::text as snapshot');
      exportSnapshot = taken[0].snapshot;
    }
    // COPY takes no parameters: the literals are escaped by the driver.
    const where = archivableRowsWhere(args.logType, {
      siteId: client.escapeLiteral(args.siteId),
      cutoff: `${client.escapeLiteral(args.cutoff.toISOString())}::timestamptz`,
    });
    // One COPY of the snapshot's set in id order, cut into parts as it streams.
    const nextFile = () => {
      const partId = crypto.randomUUID();
      partIds.push(partId);
      return stagingFile(args.dataDir, partId);
    };
    const staged = await copyCsvParts({
      client,
      select: `select t.* from ${table} t where ${where} order by t.id`,
      rowsPerPart: args.rowsPerPart,
      nextFile,
      recordIds: true,
    });

    const parts: ExportedPartRecord[] = [];
    for (const [index, csv] of staged.entries()) {
      const partNo = index + 1;
      const partId = partIds[index];
      const encoded = args.encoding ? await args.encoding.encode(csv, stagingFile(args.dataDir, partId, args.encoding.format)) : null;
      const format = encoded && args.encoding ? args.encoding.format : 'csv';
      const file = encoded ?? csv;
      const fileName = args.partition
        ? archivePartitionFileName(args.logType, args.partition.from, args.partition.archiveId, partNo, format)
        : archiveFileName(args.logType, args.cutoff, partNo, format);
      await recordPart(client, args, { partId, partNo, fileName, format, csv, file, exportSnapshot, encoderSettings: encoded ? encoded.settings : null });
      parts.push({ partId, partNo, fileName, rowCount: csv.rowCount });
    }
    await client.query('commit');
    return parts;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    // No part of an export that did not commit exists: its staged files go too (a retry writes its own).
    for (const partId of partIds)
      for (const file of [stagingFile(args.dataDir, partId), `${stagingFile(args.dataDir, partId)}.ids`, stagingFile(args.dataDir, partId, 'parquet')])
        await fs.promises.rm(file, { force: true });
    throw error;
  } finally {
    await client.end();
  }
}

/** Records one exported part in the manifest, with the ids it holds, in the export's transaction. */
async function recordPart(
  client: Awaited<ReturnType<typeof connectForCopy>>,
  args: Pick<PartExport, 'workflowId' | 'runId' | 'logType' | 'siteId' | 'cutoff' | 'partition'>,
  part: {
    partId: string;
    partNo: number;
    fileName: string;
    format: ArchiveFormat;
    csv: CsvPart;
    file: { sizeBytes: number; sha256: string };
    exportSnapshot: string | null;
    encoderSettings: EncoderSettings | null;
  },
): Promise<void> {
  const { partId, partNo, fileName, format, csv, file, exportSnapshot } = part;
  await client.query(
    `insert into ${PART_TABLE} (id, workflow_id, run_id, log_type, site_id, cutoff, part_no, file_name, row_count, min_id, max_id, size_bytes, sha256, state, partition_archive_id, format, export_snapshot, encoder)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 'EXPORTED', $14, $15, $16::pg_snapshot, $17::jsonb)`,
    [
      partId,
      args.workflowId,
      args.runId,
      args.logType,
      args.siteId,
      args.cutoff,
      partNo,
      fileName,
      csv.rowCount,
      csv.firstId,
      csv.lastId,
      file.sizeBytes,
      file.sha256,
      args.partition?.archiveId ?? null,
      format,
      exportSnapshot,
      part.encoderSettings ? JSON.stringify(part.encoderSettings) : null,
    ],
  );
  const { rows: recorded } = await client.query<{ n: number }>(
    `insert into ${PART_IDS_TABLE} (part_id, ids) values ($1, $2::bigint[]) returning cardinality(ids) as n`,
    [partId, await takeIdsLiteral(csv)],
  );
  if (recorded[0].n !== csv.rowCount) throw new Error(`part ${partNo} recorded ${recorded[0].n} ids for ${csv.rowCount} exported rows`);
}

/**
 * Writes a recorded part's file again from the ids its manifest holds (its ids are not recorded again):
 * its CSV, encoded as the part was (`encoding`, for a part not in CSV). Answers the file's size and sha256.
 */
export async function rewritePartFile(args: {
  databaseUrl: string;
  part: ArchivePartRow;
  file: string;
  encoding?: PartEncoding;
}): Promise<{ sizeBytes: number; sha256: string } | undefined> {
  if (args.part.format !== 'csv' && args.encoding?.format !== args.part.format)
    throw new Error(`no encoding given for the ${args.part.format} part ${args.part.file_name}`);
  const client = await connectForCopy(args.databaseUrl);
  try {
    const csvFile = args.encoding ? `${args.file}.csv` : args.file;
    const [rewritten] = await copyCsvParts({
      client,
      select: `select t.* from ${LOG_TABLES[args.part.log_type]} t
                where t.id = any((select ids from ${PART_IDS_TABLE} where part_id = ${client.escapeLiteral(args.part.id)})::bigint[]) order by t.id`,
      rowsPerPart: MAX_ROWS_PER_PART,
      nextFile: () => csvFile,
      recordIds: false,
    });
    if (!rewritten || !args.encoding) return rewritten;
    const encoded = await args.encoding.encode(rewritten, args.file, args.part.encoder);
    if (!encoded) {
      await fs.promises.rm(csvFile, { force: true });
      throw new Error(`${args.part.file_name} could not be written again as ${args.part.format}`);
    }
    return encoded;
  } finally {
    await client.end();
  }
}
