import path from 'node:path';
import pg from 'pg';
import { ArchiveFormat } from '../../domain/archival';
import { connectClient } from '../db';

/** Where a part's file waits between export and upload (a Parquet part's CSV first waits beside it). */
export function stagingFile(dataDir: string, partId: string, format: ArchiveFormat = 'csv'): string {
  return path.join(dataDir, 'archive-staging', `${partId}.${format}`);
}

/** A client of its own for COPY, in UTC so timestamps are written with a `+00` offset. */
export async function connectForCopy(databaseUrl: string): Promise<pg.Client> {
  const client = await connectClient({ connectionString: databaseUrl });
  await client.query("set timezone = 'UTC'; set datestyle = 'ISO, YMD'");
  return client;
}
