import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { ArchiveFormat } from '../../domain/archival';
import { connectClient } from '../db';

/** Where a part's file waits between export and upload (a Parquet part's CSV first waits beside it). */
export function stagingFile(dataDir: string, partId: string, format: ArchiveFormat = 'csv'): string {
  return path.join(dataDir, 'archive-staging', `${partId}.${format}`);
}

/**
 * Takes a staged part's file away from the staging folder, to a name of the taker's own on the same file
 * system (a rename: no byte copied). What the taker then hashes and stores can no longer be written by an
 * exporter writing the part again, which writes a new file at the staged name. Null: no file is staged
 * there (gone, or this process does not share the workers' data folder).
 */
export async function takeStagedFile(dataDir: string, partId: string, format: ArchiveFormat): Promise<string | null> {
  const taken = `${stagingFile(dataDir, partId, format)}.${crypto.randomUUID()}.taken`;
  try {
    await fs.promises.rename(stagingFile(dataDir, partId, format), taken);
    return taken;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** Puts a file taken with takeStagedFile back at its staged name, for the next attempt to store (its bytes were verified). */
export async function returnStagedFile(taken: string, dataDir: string, partId: string, format: ArchiveFormat): Promise<void> {
  await fs.promises.rename(taken, stagingFile(dataDir, partId, format)).catch(() => undefined);
}

/** A client of its own for COPY, in UTC so timestamps are written with a `+00` offset. */
export async function connectForCopy(databaseUrl: string): Promise<pg.Client> {
  const client = await connectClient({ connectionString: databaseUrl });
  await client.query("set timezone = 'UTC'; set datestyle = 'ISO, YMD'");
  return client;
}
