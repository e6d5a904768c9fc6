import { Knex } from 'knex';
import { decryptSecret, encryptSecret, SecretKeys } from '../../lib/secrets';
import { refusedWith } from '../../lib/errors';
import { storeEndpointOf } from '../../lib/config';
import { LogType, storeEndpointRefusal, storeSettingsDiffer, storeWriteRefusal } from '../../domain/archival';
import { reencryptColumns } from '../sealed-columns';
import { POLICY_TABLE } from './policies';
import type { Actor } from '../../domain/actor';

/**
 * S3-compatible archive stores (migration 032): an endpoint and a bucket, with the keys to reach them, the
 * secret key sealed under SECRETS_KEY and bound to its row. Policies name a store; the platform's own
 * (ARCHIVE_S3_*) is a row like the others, found by its endpoint and bucket.
 */
export const STORE_TABLE = 'settings.archive_store';
const SECRET_COLUMN = 'secret_access_key';

export interface StoreLocation {
  endpoint: string;
  bucket: string;
  region: string;
  pathStyle: boolean;
}

export interface ArchiveStoreRow {
  id: string;
  endpoint: string;
  bucket: string;
  region: string;
  path_style: boolean;
  access_key_id: string | null;
  secret_access_key: string | null;
  updated_by: string | null;
  updated_by_name: string | null;
  created_at: Date;
  updated_at: Date;
}

/** Keys given for a store: the secret may be left out to keep the stored one, with the same key id only. */
export interface StoreKeys {
  accessKeyId: string;
  secretAccessKey?: string;
}

/** An endpoint as stored: its origin and path, no trailing slash; a URL with user info, a query or a fragment is refused. */
export function normalizedEndpoint(endpoint: string): string {
  const refusal = storeEndpointRefusal(endpoint);
  if (refusal) throw refusedWith(refusal);
  return storeEndpointOf(new URL(endpoint));
}

export async function findArchiveStore(db: Knex, id: string): Promise<ArchiveStoreRow | undefined> {
  return (await db(STORE_TABLE).where({ id }).first()) as ArchiveStoreRow | undefined;
}

/** The store at this endpoint and bucket, if it was ever named. */
export async function findArchiveStoreAt(db: Knex, at: { endpoint: string; bucket: string }): Promise<ArchiveStoreRow | undefined> {
  return (await db(STORE_TABLE)
    .where({ endpoint: normalizedEndpoint(at.endpoint), bucket: at.bucket })
    .first()) as ArchiveStoreRow | undefined;
}

/**
 * The store at this endpoint and bucket, made if new; `keys` set its keys (sealed). A store's region and path
 * style are set when it is made, and changed only by the platform's own configuration (`fromConfig`): a
 * policy that names a known store with others is refused (400), so that no one re-points a store's keys. A new
 * key id without its secret is refused (400), and so is a store left without keys when `keysRequired`.
 */
export async function ensureArchiveStore(
  db: Knex,
  secrets: SecretKeys,
  args: {
    location: Partial<Pick<StoreLocation, 'region' | 'pathStyle'>> & Pick<StoreLocation, 'endpoint' | 'bucket'>;
    keys?: StoreKeys;
    actor: Actor;
    keysRequired: boolean;
    fromConfig?: boolean;
  },
): Promise<ArchiveStoreRow> {
  const run = async (trx: Knex): Promise<ArchiveStoreRow> => {
    const { bucket } = args.location;
    const endpoint = normalizedEndpoint(args.location.endpoint);
    const region = args.location.region ?? 'us-east-1';
    const pathStyle = args.location.pathStyle ?? true;
    await trx.raw(`insert into ${STORE_TABLE} (endpoint, bucket, region, path_style) values (?, ?, ?, ?) on conflict (endpoint, bucket) do nothing`, [
      endpoint,
      bucket,
      region,
      pathStyle,
    ]);
    let store = (await trx(STORE_TABLE).where({ endpoint, bucket }).forUpdate().first()) as ArchiveStoreRow;
    const write = {
      store: { endpoint, bucket, region: store.region, pathStyle: store.path_style, accessKeyId: store.access_key_id },
      asked: { region: args.location.region, pathStyle: args.location.pathStyle },
      keys: args.keys,
      keysRequired: args.keysRequired,
      fromConfig: args.fromConfig ?? false,
    };
    const refusal = storeWriteRefusal(write);
    if (refusal) throw refusedWith(refusal);
    if (storeSettingsDiffer(write))
      [store] = (await trx(STORE_TABLE)
        .where({ id: store.id })
        .update({ region, path_style: pathStyle, updated_at: trx.fn.now() })
        .returning('*')) as ArchiveStoreRow[];
    if (!args.keys) return store;
    const sealed =
      args.keys.secretAccessKey === undefined
        ? store.secret_access_key
        : encryptSecret(args.keys.secretAccessKey, secrets, { table: STORE_TABLE, column: SECRET_COLUMN, rowId: store.id });
    const [updated] = (await trx(STORE_TABLE)
      .where({ id: store.id })
      .update({
        access_key_id: args.keys.accessKeyId,
        [SECRET_COLUMN]: sealed,
        updated_by: args.actor.id,
        updated_by_name: args.actor.name,
        updated_at: trx.fn.now(),
      })
      .returning('*')) as ArchiveStoreRow[];
    return updated;
  };
  // Inside the caller's transaction when there is one (a policy's write), so that a refusal there undoes this too.
  return db.isTransaction ? run(db) : db.transaction(run);
}

/** The store's keys in the clear, for the S3 client about to use them; null when none are set. A tampered secret throws. */
export function openStoreKeys(store: ArchiveStoreRow, secrets: SecretKeys): { accessKeyId: string; secretAccessKey: string } | null {
  if (!store.access_key_id || !store.secret_access_key) return null;
  return {
    accessKeyId: store.access_key_id,
    secretAccessKey: decryptSecret(store.secret_access_key, secrets, { table: STORE_TABLE, column: SECRET_COLUMN, rowId: store.id }),
  };
}

/** For `secrets:rotate`: every store's secret key re-encrypted under the current SECRETS_KEY. */
export async function reencryptStoreSecrets(db: Knex, secrets: SecretKeys): Promise<{ rewritten: number; unreadable: string[] }> {
  return reencryptColumns(db, secrets, { table: STORE_TABLE, idColumn: 'id', columns: [SECRET_COLUMN] });
}

/** Where a site's archive files go: the file sink, or a store (null: the platform's) under a prefix (null: the platform's). */
export type ResolvedSink = { sink: 'file' } | { sink: 's3'; storeId: string | null; prefix: string | null };

/**
 * The sink of a site's archive files: its own policy's, else the global one's, else the platform's
 * (`fallback`, ARCHIVE_SINK). A policy that names no sink passes the choice on; the policy that names `s3`
 * also says which store and prefix (or the platform's).
 */
export async function resolveArchiveSink(db: Knex, args: { logType: LogType; siteId: string; fallback: 'file' | 's3' }): Promise<ResolvedSink> {
  const rows = (await db(POLICY_TABLE)
    .where({ log_type: args.logType })
    .andWhere((q) => q.where({ site_id: args.siteId }).orWhereNull('site_id'))
    .select('site_id', 'sink', 's3_store_id', 's3_prefix')) as Array<{
    site_id: string | null;
    sink: 'file' | 's3' | null;
    s3_store_id: string | null;
    s3_prefix: string | null;
  }>;
  const naming = rows.find((row) => row.site_id === args.siteId && row.sink) ?? rows.find((row) => row.site_id === null && row.sink);
  if (!naming) return args.fallback === 'file' ? { sink: 'file' } : { sink: 's3', storeId: null, prefix: null };
  return naming.sink === 'file' ? { sink: 'file' } : { sink: 's3', storeId: naming.s3_store_id, prefix: naming.s3_prefix };
}
