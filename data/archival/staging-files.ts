import path from 'node:path';
import pg from 'pg';
import { ArchiveFormat } from '../../domain/archival';

/** Where a part's file waits between export and upload (a Parquet part's CSV first waits beside it). */
export function stagingFile(dataDir: string, partId: string, format: ArchiveFormat = 'csv'): string {
  return path.join(dataDir, 'archive-staging', `${partId}.${format}`);
}

/** A client of its own for COPY, in UTC so timestamps are written with a `+00` offset. */
export async function connectForCopy(databaseUrl: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl });
  // A dropped connection (a restart, a failover) rejects the query in flight where it is awaited, and the
  // activity is retried; the client's own 'error' event, idle or not, must not take the worker down.
  client.on('error', () => undefined);
  await client.connect();
  await client.query("set timezone = 'UTC'; set datestyle = 'ISO, YMD'");
  return client;
}
