import fs from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';

/** The file being converted now: conversions in one process run one after another, so their memory does not add up. */
let inTurn: Promise<unknown> = Promise.resolve();

/**
 * Parquet through DuckDB, embedded: its Parquet reader and writer are built into the library, and loading
 * or installing any extension is switched off, so nothing is fetched at run time. One thread, a memory
 * limit and one file at a time keep it beside the worker's own heap; one instance per file, closed after it.
 */
function withDuckDb<T>(work: (run: (sql: string) => Promise<void>) => Promise<T>): Promise<T> {
  const turn = inTurn.then(() => convertAlone(work));
  inTurn = turn.catch(() => undefined);
  return turn;
}

async function convertAlone<T>(work: (run: (sql: string) => Promise<void>) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(':memory:', {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'false',
    threads: '1',
    memory_limit: MEMORY_LIMIT,
    preserve_insertion_order: 'true',
  });
  try {
    const connection = await instance.connect();
    try {
      return await work(async (sql) => void (await connection.run(sql)));
    } finally {
      connection.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

const MEMORY_LIMIT = '160MB';
/**
 * What a row group holds, about. Small, for the worker's peak: a 47 MB part of 250,000 log rows converted
 * and read back in a bare process peaked at 216 MiB with 2 MiB row groups against 262 MiB with 40 MiB ones, in
 * the same time (DuckDB's memory limit moved it by less than 10 MiB).
 */
const ROW_GROUP_BYTES = 2 * 1024 * 1024;
/** The row groups of a part recorded before each part kept its own (migration 037): its file is written again with these. */
const FIRST_ROW_GROUP_BYTES = 40 * 1024 * 1024;
/** The longest CSV record read (a log row with large bodies); DuckDB's own default is 2 MB. */
const MAX_RECORD_BYTES = 16 * 1024 * 1024;

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/**
 * Rows per row group for `csvFile` holding `rowCount` rows, by its bytes per row, so a part of wide rows stays
 * within the memory limit. `first`: the rule for a part recorded before parts kept their own.
 */
export async function rowGroupRowsFor(csvFile: string, rowCount: number, rule: 'current' | 'first' = 'current'): Promise<number> {
  const { size } = await fs.promises.stat(csvFile);
  const rowBytes = Math.max(1, Math.ceil(size / Math.max(1, rowCount)));
  const groupBytes = rule === 'first' ? FIRST_ROW_GROUP_BYTES : ROW_GROUP_BYTES;
  return Math.min(65536, Math.max(1024, Math.floor(groupBytes / rowBytes)));
}

/**
 * Writes a CSV archive file (PostgreSQL's `FORMAT csv, HEADER true`, its header naming `columns`) as Parquet
 * with zstd: one text column per CSV column, each value PostgreSQL's text for it and NULL where the CSV's
 * field is an unquoted empty one. Nothing is guessed (no format sniffing, no comment lines, no rows skipped),
 * rows keep their order, and the same CSV with the same `rowGroupRows` always gives the same bytes.
 */
export async function csvToParquet(args: { csvFile: string; columns: string[]; rowGroupRows: number; parquetFile: string }): Promise<void> {
  const columns = `{${args.columns.map((name) => `${literal(name)}: 'VARCHAR'`).join(', ')}}`;
  const rowGroupRows = Math.trunc(args.rowGroupRows);
  if (!(rowGroupRows >= 1)) throw new Error(`a row group holds at least one row, not ${args.rowGroupRows}`);
  await withDuckDb((run) =>
    run(
      `copy (select * from read_csv(${literal(args.csvFile)}, header = true, auto_detect = false, columns = ${columns}, skip = 0,
              delim = ',', quote = '"', escape = '"', comment = '', new_line = '\\n', allow_quoted_nulls = false, strict_mode = true,
              max_line_size = ${MAX_RECORD_BYTES}, buffer_size = ${2 * MAX_RECORD_BYTES}))
       to ${literal(args.parquetFile)} (format parquet, compression zstd, row_group_size ${rowGroupRows})`,
    ),
  );
}

/**
 * Writes a Parquet archive file back as the CSV it was made from (csvToParquet): a header of its column
 * names, NULL as an empty unquoted field, an empty string as `""`, rows in the file's order.
 */
export async function parquetToCsv(parquetFile: string, csvFile: string): Promise<void> {
  await withDuckDb((run) =>
    run(`copy (select * from read_parquet(${literal(parquetFile)})) to ${literal(csvFile)} (format csv, header true, delim ',', quote '"', escape '"')`),
  );
}
