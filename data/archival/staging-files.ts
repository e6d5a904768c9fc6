import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { ArchiveFormat } from '../../domain/archival';
import { connectClient } from '../db';
import { conflict } from '../../lib/errors';

/** Where a part's file waits between export and upload (a Parquet part's CSV first waits beside it). */
export function stagingFile(dataDir: string, partId: string, format: ArchiveFormat = 'csv'): string {
  return path.join(dataDir, 'archive-staging', `${partId}.${format}`);
}

/** Errors that say the staged file cannot be linked from this process (gone, another file system, no right to), not that something broke. */
const NOT_HERE = new Set(['ENOENT', 'EACCES', 'EPERM', 'EROFS', 'EXDEV']);

/**
 * Takes a staged part's file for storing: a hard link of it under a name of the taker's own, in the same
 * folder (no byte copied). The link is the inode the export wrote; an exporter writing the part again
 * writes a new file and renames it over the staged name, so what the taker hashes and stores cannot change
 * under it. The staged name stays until the part's rows are gone. Null: no regular file is staged there
 * for this process (gone, or a folder it does not share or may not write). Anything but a regular file
 * (a symlink planted at the staged name) is refused.
 */
export async function takeStagedFile(dataDir: string, partId: string, format: ArchiveFormat): Promise<string | null> {
  const staged = stagingFile(dataDir, partId, format);
  const taken = `${staged}.${crypto.randomUUID()}.taken`;
  try {
    await fs.promises.link(staged, taken);
  } catch (error) {
    if (NOT_HERE.has((error as NodeJS.ErrnoException).code ?? '')) return null;
    throw error;
  }
  const kind = await fs.promises.lstat(taken);
  if (!kind.isFile()) {
    await fs.promises.rm(taken, { force: true });
    throw conflict('CONFLICT', `The staged file of part ${partId} is not a regular file: it is not stored.`);
  }
  return taken;
}

/** Removes a part's staged file, and any link a taker left (a process killed while storing it). */
export async function removeStagedFiles(dataDir: string, partId: string, format: ArchiveFormat): Promise<void> {
  const staged = stagingFile(dataDir, partId, format);
  const folder = path.dirname(staged);
  const leftovers = (await fs.promises.readdir(folder).catch(() => [] as string[])).filter(
    (name) => name.startsWith(`${path.basename(staged)}.`) && name.endsWith('.taken'),
  );
  await Promise.all([staged, ...leftovers.map((name) => path.join(folder, name))].map((file) => fs.promises.rm(file, { force: true })));
}

/** A client of its own for COPY, in UTC so timestamps are written with a `+00` offset. */
export async function connectForCopy(databaseUrl: string): Promise<pg.Client> {
  const client = await connectClient({ connectionString: databaseUrl });
  await client.query("set timezone = 'UTC'; set datestyle = 'ISO, YMD'");
  return client;
}
