import crypto from 'node:crypto';
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
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
    enable_external_access: 'true',
    threads: '1',
    memory_limit: '160MB',
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

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/**
 * Writes a CSV archive file (PostgreSQL's `FORMAT csv, HEADER true`) as Parquet with zstd: one column per CSV
 * column, by its name, each value PostgreSQL's text for it and NULL where the CSV's field is an unquoted
 * empty one, so that the file reads back to the very same CSV (parquetToCsv). Rows keep their order. The
 * same CSV always gives the same bytes. Answers the Parquet file's size and sha256.
 */
export async function csvToParquet(csvFile: string, parquetFile: string): Promise<{ sizeBytes: number; sha256: string }> {
  await withDuckDb((run) =>
    run(
      `copy (select * from read_csv(${literal(csvFile)}, header = true, all_varchar = true, delim = ',', quote = '"', escape = '"',
              new_line = '\\n', allow_quoted_nulls = false, strict_mode = true, auto_detect = true, sample_size = -1))
       to ${literal(parquetFile)} (format parquet, compression zstd, row_group_size 65536)`,
    ),
  );
  return fileDigest(parquetFile);
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

async function fileDigest(file: string): Promise<{ sizeBytes: number; sha256: string }> {
  const hash = crypto.createHash('sha256');
  await pipeline(fs.createReadStream(file), hash);
  return { sizeBytes: (await fs.promises.stat(file)).size, sha256: hash.digest('hex') };
}
