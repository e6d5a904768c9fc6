import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';

/** Where a part's CSV waits between export and upload. */
export function stagingFile(dataDir: string, partId: string): string {
  return path.join(dataDir, 'archive-staging', `${partId}.csv`);
}

export interface WrittenCsv {
  sha256: string;
  sizeBytes: number;
  rowCount: number;
}

/**
 * Streams `COPY (<select>) TO STDOUT WITH (FORMAT csv, HEADER true)` into a file, hashing on the way.
 * PostgreSQL writes the CSV itself, so values keep their full precision (microseconds, JSON text, NULL
 * versus ""), and memory does not grow with the row count.
 */
export async function copyToCsvFile(args: {
  client: pg.Client;
  select: string;
  file: string;
  onChunk?: (bytes: number) => void;
}): Promise<WrittenCsv> {
  await fs.promises.mkdir(path.dirname(args.file), { recursive: true });
  const hash = crypto.createHash('sha256');
  let sizeBytes = 0;
  const temporary = `${args.file}.${crypto.randomUUID()}.tmp`;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      sizeBytes += chunk.length;
      args.onChunk?.(sizeBytes);
      done(null, chunk);
    },
  });
  const copy = args.client.query(copyTo(`COPY (${args.select}) TO STDOUT WITH (FORMAT csv, HEADER true)`));
  await pipeline(copy, meter, fs.createWriteStream(temporary));
  await fs.promises.rename(temporary, args.file);
  return { sha256: hash.digest('hex'), sizeBytes, rowCount: copy.rowCount };
}

/** A client of its own for COPY, in UTC so timestamps are written with a `+00` offset. */
export async function connectForCopy(databaseUrl: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query("set timezone = 'UTC'; set datestyle = 'ISO, YMD'");
  return client;
}
