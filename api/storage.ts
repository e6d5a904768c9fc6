import path from 'node:path';
import { PassThrough, pipeline } from 'node:stream';
import { Config } from '../lib/config';
import { PlatformError } from '../lib/errors';
import { SecretKeys, secretKeysOf, SecretTampered } from '../lib/secrets';
import { LogType } from '../domain/archival';
import { Db } from '../data/db';
import { AssetStorage, createFileStorage, StorageFull, StoredObject } from '../data/assets/storage';
import { ArchiveStoreRow, ensureArchiveStore, findArchiveStore, findArchiveStoreAt, openStoreKeys, resolveArchiveSink } from '../data/archival/archive-stores';
import { createS3Store, S3KeyTaken, S3Store, S3Unavailable, S3Unverified } from '../adapters/archival/s3-store';
import { allowedHostOf, assertOutboundAllowed, guardedLookup, OutboundPolicy, OutboundRefused, outboundPolicyOf } from '../adapters/messaging/outbound';

/** Where the archive sink puts a file a worker uploaded: the asset folder, or an S3 store, as the site's policy says. */
export interface ArchiveSink {
  /** Takes over the uploaded file and answers where its bytes now are; a refusal is a PlatformError saying why. */
  store(filePath: string, known: { sha256: string; sizeBytes: number }, place: { logType: LogType; siteId: string; fileName: string }): Promise<StoredObject>;
}

/** An archive file in a store: `s3://{store id}/{key}`, read with that store's endpoint and keys whatever the policy says later. */
const S3_KEY = /^s3:\/\/([0-9a-f-]{36})\/(.+)$/;

/** An archive file's place in a store, from its storage key (`s3://{store id}/{object key}`); null: a file's sha256. */
function placeInStore(key: string): { storeId: string; objectKey: string } | null {
  const matched = S3_KEY.exec(key);
  return matched ? { storeId: matched[1], objectKey: matched[2] } : null;
}

/** A client of one store: its keys read at each use, so new ones apply at once; every socket's address guarded. */
function storeClient(args: { db: Db; secrets: SecretKeys; guard: OutboundPolicy; store: ArchiveStoreRow }): S3Store {
  const { db, secrets, guard, store } = args;
  return createS3Store(
    { endpoint: store.endpoint, bucket: store.bucket, region: store.region, forcePathStyle: store.path_style },
    async () => {
      const current = await findArchiveStore(db, store.id);
      try {
        return current ? openStoreKeys(current, secrets) : null;
      } catch (error) {
        if (error instanceof SecretTampered) throw new PlatformError('SECRET_INTEGRITY_FAILED', `The keys of archive store ${store.id}: ${error.message}`);
        throw error;
      }
    },
    // Every socket's address checked as it connects (a name that rebinds after the check above included).
    { lookup: guardedLookup(guard, allowedHostOf(store.endpoint, guard)) },
  );
}

/** The platform's own store (ARCHIVE_S3_*), recorded on first use so that its files can name it; its configuration is its truth. */
async function platformStore(config: Config, db: Db, secrets: SecretKeys): Promise<ArchiveStoreRow> {
  if (!config.archive.s3) throw new PlatformError('ARCHIVE_SINK_UNAVAILABLE', "The sink is s3 with the platform's store, and no ARCHIVE_S3_ENDPOINT is set.");
  const { endpoint, bucket, region, forcePathStyle } = config.archive.s3;
  const known = await findArchiveStoreAt(db, { endpoint, bucket });
  if (known && known.region === region && known.path_style === forcePathStyle) return known;
  return ensureArchiveStore(db, secrets, {
    location: { endpoint, bucket, region, pathStyle: forcePathStyle },
    actor: { id: 'platform', name: null },
    keysRequired: false,
    fromConfig: true,
  });
}

/**
 * The API's storage: asset bytes in the data folder, archive files where the site's policy (else
 * ARCHIVE_SINK) says. Reading and removing follow each asset's own storage key, so files stored before a
 * change of sink stay readable. Each store's endpoint passes the outbound guard at every use, as at save.
 */
export function platformStorage({ config, db }: { config: Config; db: Db }): { storage: AssetStorage; archives: ArchiveSink; close(): void } {
  const files = createFileStorage(path.join(config.dataDir, 'assets'));
  const secrets = secretKeysOf(config);
  const guard = outboundPolicyOf(config, 's3');
  const clients = new Map<string, S3Store>();

  const objectsOf = async (storeId: string): Promise<S3Store> => {
    const store = await findArchiveStore(db, storeId);
    if (!store) throw new PlatformError('ARCHIVE_SINK_UNAVAILABLE', `No archive store ${storeId}.`);
    await assertOutboundAllowed(store.endpoint, guard).catch((error: unknown) => {
      throw new PlatformError('ARCHIVE_SINK_UNAVAILABLE', error instanceof OutboundRefused ? error.message : `${store.endpoint}: ${(error as Error).message}`);
    });
    // One client per store and way of reaching it; the keys are read at each use, so new ones apply at once.
    const reach = `${store.id}|${store.endpoint}|${store.region}|${store.path_style}`;
    let objects = clients.get(reach);
    if (!objects) {
      objects = storeClient({ db, secrets, guard, store });
      clients.set(reach, objects);
    }
    return objects;
  };

  const inStore = <T>(place: { storeId: string; objectKey: string }, use: (objects: S3Store, objectKey: string) => Promise<T>): Promise<T> =>
    objectsOf(place.storeId)
      .then((objects) => use(objects, place.objectKey))
      .catch(refusal);

  const storage: AssetStorage = {
    moveFile: (filePath, known) => files.moveFile(filePath, known),
    read: (key) => {
      const place = placeInStore(key);
      if (!place) return files.read(key);
      // The stream is answered at once; a store that cannot be reached ends it with the reason.
      const out = new PassThrough();
      void objectsOf(place.storeId).then(
        (objects) => pipeline(objects.read(place.objectKey), out, () => undefined),
        (error: Error) => out.destroy(error),
      );
      return out;
    },
    exists: (key) => {
      const place = placeInStore(key);
      return place ? inStore(place, (objects, objectKey) => objects.exists(objectKey)) : files.exists(key);
    },
    remove: (key) => {
      const place = placeInStore(key);
      return place ? inStore(place, (objects, objectKey) => objects.remove(objectKey)) : files.remove(key);
    },
  };

  const archives: ArchiveSink = {
    async store(filePath, known, place) {
      const sink = await resolveArchiveSink(db, { logType: place.logType, siteId: place.siteId, fallback: config.archive.sink });
      if (sink.sink === 's3') {
        const storeId = sink.storeId ?? (await platformStore(config, db, secrets)).id;
        const objectKey = `${sink.prefix ?? config.archive.s3?.prefix ?? ''}${place.siteId}/${place.fileName}`;
        const key = `s3://${storeId}/${objectKey}`;
        await inStore({ storeId, objectKey }, (objects) => objects.put(filePath, known, objectKey));
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

  return {
    storage,
    archives,
    close: () => {
      for (const objects of clients.values()) objects.close();
      clients.clear();
    },
  };
}

/** A store's failures in the platform's vocabulary; the worker retries a 5xx, and a site's rows stay until a file is confirmed. */
function refusal(error: unknown): never {
  if (error instanceof S3Unavailable) throw new PlatformError('ARCHIVE_SINK_UNAVAILABLE', error.message);
  if (error instanceof S3Unverified) throw new PlatformError('ARCHIVE_SINK_UNVERIFIED', error.message);
  if (error instanceof S3KeyTaken) throw new PlatformError('ASSET_EXISTS', error.message);
  throw error;
}
