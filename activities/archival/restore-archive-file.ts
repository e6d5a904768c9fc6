import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Context } from '@temporalio/activity';
import { finalFailure } from '../failures';
import { archivedFileOfAsset, ArchivedFile, loadArchiveCsv } from '../../data/archival/restore';
import { ArchivalDeps } from './deps';
import { parquetToCsv } from '../../adapters/archival/parquet';

export interface RestoreArchiveFileInput {
  assetId: string;
  /** Names the download's staging file: one per run, so a retry starts over from nothing. */
  runId: string;
}

export interface RestoredArchiveFile {
  rowsInFile: number;
  rowsInserted: number;
}

async function archivedFile(db: ArchivalDeps['db'], assetId: string): Promise<ArchivedFile> {
  const file = await archivedFileOfAsset(db, assetId);
  if (!file) throw finalFailure('NOT_AN_ARCHIVE_FILE', `asset ${assetId} is not a file of an archive run`);
  return file;
}

/** What the archive run's manifest says of an asset: its log type, site, name, rows, sha256 and format. */
export function describeArchiveFile({ db }: ArchivalDeps) {
  return async (input: { assetId: string }): Promise<ArchivedFile> => archivedFile(db, input.assetId);
}

/**
 * Loads one archive file back into its log table. The file is fetched from the asset sink and must hash to
 * the sha256 its archive run recorded in the manifest, or nothing is loaded (ARCHIVE_FILE_CORRUPT, final).
 * The load is one transaction that skips the ids already present, so the activity is safe to repeat.
 */
export function restoreArchiveFile({ db, config }: ArchivalDeps) {
  return async (input: RestoreArchiveFileInput): Promise<RestoredArchiveFile> => {
    const file = await archivedFile(db, input.assetId);

    const staged = path.join(config.dataDir, 'archive-staging', `restore-${input.runId}.${file.format}`);
    // A Parquet file is loaded as the CSV it was made from, once its own bytes passed the sha256 gate.
    const csv = file.format === 'csv' ? staged : `${staged}.csv`;
    await fs.promises.mkdir(path.dirname(staged), { recursive: true });
    const heartbeat = setInterval(() => Context.current().heartbeat({ stage: 'restore' }), 5000);
    try {
      const response = await fetch(`${config.api.internalUrl}/api/assets/internal/archive/${encodeURIComponent(input.assetId)}`, {
        headers: { authorization: `Bearer ${config.secrets.internalToken}` },
        redirect: 'error',
        signal: Context.current().cancellationSignal,
      });
      if (response.status === 404) throw finalFailure('NOT_FOUND', `the asset sink has no archive file ${input.assetId}`);
      if (!response.ok || !response.body) throw new Error(`the asset sink answered ${response.status} for ${file.fileName}`);
      const hash = crypto.createHash('sha256');
      await pipeline(
        Readable.fromWeb(response.body as import('node:stream/web').ReadableStream),
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const chunk of chunks) {
            hash.update(chunk);
            yield chunk;
          }
        },
        fs.createWriteStream(staged),
      );
      const sha256 = hash.digest('hex');
      if (sha256 !== file.sha256) {
        throw finalFailure('ARCHIVE_FILE_CORRUPT', `${file.fileName} hashes to ${sha256}, not to the ${file.sha256} its archive run recorded`);
      }
      if (csv !== staged) await parquetToCsv(staged, csv);
      return await loadArchiveCsv({ databaseUrl: config.databaseUrl, logType: file.logType, file: csv });
    } finally {
      clearInterval(heartbeat);
      await fs.promises.rm(staged, { force: true });
      await fs.promises.rm(csv, { force: true });
    }
  };
}
