import { Knex } from 'knex';
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { from as copyFrom } from 'pg-copy-streams';
import { ArchiveFormat, LogType } from '../../domain/archival';
import { csvHeaderColumns } from './csv-parts';
import { LOG_TABLES } from './log-tables';
import { PART_TABLE } from './parts';
import { connectForCopy } from './staging-files';

/** What an archive run's manifest says of the file it stored as an asset. */
export interface ArchivedFile {
  assetId: string;
  logType: LogType;
  siteId: string;
  fileName: string;
  rowCount: number;
  sha256: string;
  format: ArchiveFormat;
}

/** The manifest's record of an asset: undefined when no archive run stored it (not an archive file). */
export async function archivedFileOfAsset(db: Knex, assetId: string): Promise<ArchivedFile | undefined> {
  const part = (await db(PART_TABLE)
    .where({ asset_id: assetId })
    .orderBy('created_at')
    .first('log_type', 'site_id', 'file_name', 'row_count', 'sha256', 'format')) as
    { log_type: LogType; site_id: string; file_name: string; row_count: number | string; sha256: string; format: ArchiveFormat } | undefined;
  if (!part) return undefined;
  return {
    assetId,
    logType: part.log_type,
    siteId: part.site_id,
    fileName: part.file_name,
    rowCount: Number(part.row_count),
    sha256: part.sha256,
    format: part.format,
  };
}

const quoteIdentifier = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Loads an archive CSV back into its log table: into a temporary table of the same definition with COPY
 * (the archive's own format), then, in one transaction, into the log table with the ids it had; rows whose
 * id is there already are skipped, so loading the same file twice inserts nothing the second time. Only
 * the columns the file names, each one the table has, are loaded: a file from before a column was added
 * still loads, and the new column takes its default. The months the rows belong to get their partitions
 * back first, before the transaction, so that it holds no lock of attaching them while it inserts.
 */
export async function loadArchiveCsv(args: { databaseUrl: string; logType: LogType; file: string }): Promise<{ rowsInFile: number; rowsInserted: number }> {
  const table = LOG_TABLES[args.logType];
  const client = await connectForCopy(args.databaseUrl);
  try {
    const [schema, name] = table.split('.');
    const { rows: known } = await client.query<{ column_name: string }>(
      'select column_name from information_schema.columns where table_schema = $1 and table_name = $2',
      [schema, name],
    );
    const columns = await csvHeaderColumns(args.file);
    const unknown = columns.filter((column) => !known.some((k) => k.column_name === column));
    if (unknown.length > 0 || !columns.includes('id')) throw new Error(`the file's columns (${columns.join(', ')}) are not those of ${table}`);
    const list = columns.map(quoteIdentifier).join(', ');

    await client.query(`create temporary table restore_rows (like ${table})`);
    const copy = client.query(copyFrom(`copy restore_rows (${list}) from stdin with (format csv, header true)`));
    await pipeline(fs.createReadStream(args.file), copy);
    await client.query(
      `select settings.ensure_log_partitions($1::regclass, (min(created_at) at time zone 'UTC')::date, (max(created_at) at time zone 'UTC')::date)
       from restore_rows having count(*) > 0`,
      [table],
    );
    await client.query('begin');
    const inserted = await client.query(
      `insert into ${table} (${list}) overriding system value
       select ${list} from restore_rows r
       where not exists (select 1 from ${table} t where t.id = r.id)
       order by id
       on conflict (id, created_at) do nothing`,
    );
    // Into a database whose identity stands below the file's ids (brought back from an older backup, say),
    // the identity is moved past them: the key is (id, created_at) and would not refuse an id handed out again.
    await client.query(
      `select setval(sequence, newest) from (
         select pg_get_serial_sequence($1, 'id')::regclass as sequence, (select max(id) from restore_rows) as newest
       ) identity where newest > coalesce(pg_sequence_last_value(sequence), 0)`,
      [table],
    );
    await client.query('commit');
    return { rowsInFile: copy.rowCount, rowsInserted: inserted.rowCount ?? 0 };
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}
