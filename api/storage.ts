import path from 'node:path';
import { Config } from '../lib/config';
import { PlatformError } from '../lib/errors';
import { secretKeysOf } from '../lib/secrets';
import { Db } from '../data/db';
import { AssetStorage, createFileStorage, StorageFull, StoredObject } from '../data/assets/storage';
import { openSinkCredentials } from '../data/archival/sink-credentials';
import { createS3Store, isS3StorageKey, S3KeyTaken, S3Store, S3Unavailable, S3Unverified } from '../adapters/archival/s3-store';

/** Where the archive sink puts a file the worker uploaded (ARCHIVE_SINK): the asset folder, or the S3 store. */
export interface ArchiveSink {
  /** Takes over the uploaded file and answers where its bytes now are; a refusal is a PlatformError saying why. */
  store(filePath: string, known: { sha256: string; sizeBytes: number }, place: { siteId: string; fileName: string }): Promise<StoredObject>;
}

/**
 * The API's storage: asset bytes in the data folder, archive files where ARCHIVE_SINK says. Reading and
 * removing follow each asset's own storage key, so files stored before a change of sink stay readable.
 */
export function platformStorage({ config, db }: { config: Config; db: Db }): { storage: AssetStorage; archives: ArchiveSink; close(): void } {
  const files = createFileStorage(path.join(config.dataDir, 'assets'));
  const s3: S3Store | null = config.archiveS3 ? createS3Store(config.archiveS3, () => openSinkCredentials(db, secretKeysOf(config))) : null;
  const s3For = (storageKey: string): S3Store => {
    if (!s3) throw new PlatformError('ARCHIVE_SINK_UNAVAILABLE', `${storageKey} is in an S3 store, and no ARCHIVE_S3_ENDPOINT is set.`);
    return s3;
  };
  const storage: AssetStorage = {
    moveFile: (filePath, known) => files.moveFile(filePath, known),
    read: (key) => (isS3StorageKey(key) ? s3For(key).read(key) : files.read(key)),
    exists: (key) => (isS3StorageKey(key) ? s3For(key).exists(key).catch(refusal) : files.exists(key)),
    remove: (key) => (isS3StorageKey(key) ? s3For(key).remove(key).catch(refusal) : files.remove(key)),
  };
  const archives: ArchiveSink = {
    async store(filePath, known, place) {
      if (config.archiveSink === 's3') {
        const key = await s3For('the archive sink').put(filePath, known, place).catch(refusal);
        return { key, ...known };
      }
      return files.moveFile(filePath, known).catch((error: unknown) => {
        if (error instanceof StorageFull)
          throw new PlatformError(
            'ARCHIVE_SINK_FULL',
            `${place.fileName} was not stored: ${error.message}. Free space where the assets are kept; the archive run resumes it.`,
          );
        throw error;
      });
    },
  };
  return { storage, archives, close: () => s3?.close() };
}

/** The S3 store's failures in the platform's vocabulary; the worker retries a 5xx, and a site's rows stay until a file is confirmed. */
function refusal(error: unknown): never {
  if (error instanceof S3Unavailable) throw new PlatformError('ARCHIVE_SINK_UNAVAILABLE', error.message);
  if (error instanceof S3Unverified) throw new PlatformError('ARCHIVE_SINK_UNVERIFIED', error.message);
  if (error instanceof S3KeyTaken) throw new PlatformError('ASSET_EXISTS', error.message);
  throw error;
}
