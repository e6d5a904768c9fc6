import { Knex } from 'knex';
import { decryptSecret, encryptSecret, SecretKeys } from '../../lib/secrets';
import { reencryptColumns } from '../sealed-columns';
import { badRequest } from '../../lib/errors';
import type { Actor } from '../content/revisions';

/**
 * The archive store's credentials (migration 032): one row, the secret key sealed under SECRETS_KEY and bound
 * to its row, so that only the API's S3 client ever holds it in the clear.
 */
const TABLE = 'settings.archive_sink_credentials';
const ROW_ID = 's3';
const SEALED = { table: TABLE, column: 'secret_access_key', rowId: ROW_ID };

export interface SinkCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** What may be shown of the credentials: never the secret key. */
export interface SinkCredentialsSummary {
  accessKeyId: string;
  updatedBy: string;
  updatedByName: string | null;
  updatedAt: Date;
}

interface CredentialsRow {
  access_key_id: string;
  secret_access_key: string;
  updated_by: string;
  updated_by_name: string | null;
  updated_at: Date;
}

const findRow = async (db: Knex): Promise<CredentialsRow | undefined> => (await db(TABLE).where({ id: ROW_ID }).first()) as CredentialsRow | undefined;

/**
 * Sets the credentials. A secret key left out keeps the stored one; a new access key id without its secret
 * is refused (400): a key id and its secret go together.
 */
export async function setSinkCredentials(
  db: Knex,
  keys: SecretKeys,
  args: { accessKeyId: string; secretAccessKey?: string; actor: Actor },
): Promise<SinkCredentialsSummary> {
  const stored = await findRow(db);
  if (args.secretAccessKey === undefined && stored?.access_key_id !== args.accessKeyId) {
    throw badRequest('VALIDATION_FAILED', 'secretAccessKey is required with a new accessKeyId: a key id and its secret go together.');
  }
  const sealed = args.secretAccessKey === undefined ? stored!.secret_access_key : encryptSecret(args.secretAccessKey, keys, SEALED);
  const row = {
    access_key_id: args.accessKeyId,
    secret_access_key: sealed,
    updated_by: args.actor.id,
    updated_by_name: args.actor.name,
    updated_at: db.fn.now(),
  };
  await db(TABLE)
    .insert({ id: ROW_ID, ...row })
    .onConflict('id')
    .merge();
  return (await sinkCredentialsSummary(db))!;
}

export async function sinkCredentialsSummary(db: Knex): Promise<SinkCredentialsSummary | null> {
  const row = await findRow(db);
  return row ? { accessKeyId: row.access_key_id, updatedBy: row.updated_by, updatedByName: row.updated_by_name, updatedAt: row.updated_at } : null;
}

/** The credentials in the clear, for the S3 client about to use them; null when none are set. A tampered secret throws. */
export async function openSinkCredentials(db: Knex, keys: SecretKeys): Promise<SinkCredentials | null> {
  const row = await findRow(db);
  return row ? { accessKeyId: row.access_key_id, secretAccessKey: decryptSecret(row.secret_access_key, keys, SEALED) } : null;
}

/** For `secrets:rotate`: the secret key re-encrypted under the current SECRETS_KEY. */
export async function reencryptSinkCredentials(db: Knex, keys: SecretKeys): Promise<{ rewritten: number; unreadable: string[] }> {
  return reencryptColumns(db, keys, { table: TABLE, idColumn: 'id', columns: [SEALED.column] });
}
