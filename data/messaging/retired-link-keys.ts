import { randomUUID } from 'node:crypto';
import { Knex } from 'knex';
import { LinkKeys, linkKeysFingerprint, linkKeysOf } from '../../lib/link-keys';
import { decryptSecret, encryptSecret, SecretKeys, SecretTampered } from '../../lib/secrets';
import { reencryptColumns } from '../sealed-columns';

const TABLE = 'email.retired_link_key';
const place = (rowId: string) => ({ table: TABLE, column: 'sealed', rowId });

/**
 * Keeps the unsubscribe-link keys of SECRETS_KEY_PREVIOUS, sealed under SECRETS_KEY, and re-seals the ones
 * kept before: what `secrets:rotate` runs, so that removing the old key breaks no link. Safe to repeat.
 */
export async function retirePreviousLinkKeys(db: Knex, keys: SecretKeys): Promise<{ rewritten: number; unreadable: string[] }> {
  if (keys.previous) {
    const retired = linkKeysOf(keys.previous);
    const id = randomUUID();
    const sealed = encryptSecret(JSON.stringify({ sealing: retired.sealing.toString('base64'), signing: retired.signing.toString('base64') }), keys, place(id));
    await db(TABLE)
      .insert({ id, fingerprint: linkKeysFingerprint(retired), sealed })
      .onConflict('fingerprint')
      .ignore();
  }
  return reencryptColumns(db, keys, { table: TABLE, idColumn: 'id', columns: ['sealed'] });
}

/** The link keys of every SECRETS_KEY rotated away that the current keys can open: for links older than them. */
export async function retiredLinkKeys(db: Knex, keys: SecretKeys): Promise<LinkKeys[]> {
  const rows = (await db(TABLE).select('id', 'sealed').orderBy('retired_at', 'desc')) as Array<{ id: string; sealed: string }>;
  return rows.flatMap((row) => {
    try {
      const opened = JSON.parse(decryptSecret(row.sealed, keys, place(row.id))) as { sealing: string; signing: string };
      return [{ sealing: Buffer.from(opened.sealing, 'base64'), signing: Buffer.from(opened.signing, 'base64') }];
    } catch (error) {
      if (error instanceof SecretTampered) return [];
      throw error;
    }
  });
}
