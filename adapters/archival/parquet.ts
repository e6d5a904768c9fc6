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
/** What a row group may hold, about: a quarter of the memory limit, so a part of wide rows fits too. */
const ROW_GROUP_BYTES = 40 * 1024 * 1024;
/** The longest CSV record read (a log row with large bodies); DuckDB's own default is 2 MB. */
const MAX_RECORD_BYTES = 16 * 1024 * 1024;

const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** The column names of a CSV's header line (PostgreSQL quotes a name only when it must). */
async function headerNames(csvFile: string): Promise<string[]> {
  const handle = await fs.promises.open(csvFile);
  try {
    const { buffer, bytesRead } = await handle.read({ buffer: Buffer.alloc(65536), position: 0 });
    const line = buffer.subarray(0, bytesRead).toString('utf8').split('\n')[0];
    const names: string[] = [];
    for (const match of line.matchAll(/("(?:[^"]|"")*"|[^,]*)(,|$)/g)) {
      const field = match[1];
      names.push(field.startsWith('"') ? field.slice(1, -1).replace(/""/g, '"') : field);
      if (match[2] === '') break;
    }
    return names;
  } finally {
    await handle.close();
  }
}

/**
 * Writes a CSV archive file (PostgreSQL's `FORMAT csv, HEADER true`) as Parquet with zstd: one text column
 * per CSV column, by its name, each value PostgreSQL's text for it and NULL where the CSV's field is an
 * unquoted empty one. Nothing is guessed (no format sniffing, no comment lines, no rows skipped), rows keep
 * their order, and the same CSV always gives the same bytes. The file is then read back to CSV and must
 * hash to `csvSha256`, or no Parquet file is answered: what is archived is proven to be the CSV's rows.
 * Answers the Parquet file's size and sha256.
 */
export async function csvToParquet(args: {
  csvFile: string;
  csvSha256: string;
  rowCount: number;
  parquetFile: string;
}): Promise<{ sizeBytes: number; sha256: string }> {
  const names = await headerNames(args.csvFile);
  const columns = `{${names.map((name) => `${literal(name)}: 'VARCHAR'`).join(', ')}}`;
  const { size } = await fs.promises.stat(args.csvFile);
  const rowBytes = Math.max(1, Math.ceil(size / Math.max(1, args.rowCount)));
  const rowGroupSize = Math.min(65536, Math.max(1024, Math.floor(ROW_GROUP_BYTES / rowBytes)));
  await withDuckDb((run) =>
    run(
      `copy (select * from read_csv(${literal(args.csvFile)}, header = true, auto_detect = false, columns = ${columns}, skip = 0,
              delim = ',', quote = '"', escape = '"', comment = '', new_line = '\\n', allow_quoted_nulls = false, strict_mode = true,
              max_line_size = ${MAX_RECORD_BYTES}, buffer_size = ${2 * MAX_RECORD_BYTES}))
       to ${literal(args.parquetFile)} (format parquet, compression zstd, row_group_size ${rowGroupSize})`,
    ),
  );
  const readBack = `${args.parquetFile}.${crypto.randomUUID()}.csv`;
  try {
    await parquetToCsv(args.parquetFile, readBack);
    const { sha256 } = await fileDigest(readBack);
    if (sha256 !== args.csvSha256) {
      await fs.promises.rm(args.parquetFile, { force: true });
      throw new Error(`${args.parquetFile} does not read back to the CSV it was written from (${sha256}, not ${args.csvSha256})`);
    }
  } finally {
    await fs.promises.rm(readBack, { force: true });
  }
  return fileDigest(args.parquetFile);
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
