import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import type { SecretsConfig } from './config';

/**
 * Secrets at rest: AES-256-GCM under a key derived from SECRETS_KEY with HKDF-SHA256. Each ciphertext is
 * bound to its place (table, column, row id) as associated data, so one copied into another row does not
 * decrypt, and only a full 16-byte tag is accepted. The stored form is `v2.<iv>.<tag>.<ciphertext>`
 * (base64url). `v1` (a bare SHA-256 key, no binding) is read by the rotation command alone, to re-encrypt
 * what an earlier release wrote; everywhere else it is refused, and nothing writes it any more.
 */
const VERSION = 'v2';
const LEGACY_VERSION = 'v1';
const TAG_BYTES = 16;

export class SecretTampered extends Error {
  constructor() {
    super('a stored secret failed its integrity check: it was changed or moved, or SECRETS_KEY is not the one that wrote it');
    this.name = 'SecretTampered';
  }
}

/**
 * A version-1 ciphertext where a secret is used: it is bound to no row, so one copied from another row would
 * decrypt. Only the rotation command reads it, to rewrite it bound.
 */
export class SecretLegacy extends SecretTampered {
  constructor() {
    super();
    this.message = 'a stored secret was written by an earlier release, bound to no row: run `npm run secrets:rotate` to rewrite it';
    this.name = 'SecretLegacy';
  }
}

/** The key that writes (`current`), and the one before it, which still reads during a rotation. */
export interface SecretKeys {
  current: string;
  previous: string | null;
}

/** Where a ciphertext lives: it decrypts only there. */
export interface SecretPlace {
  table: string;
  column: string;
  rowId: string;
}

export const secretKeysOf = (config: { secrets: Pick<SecretsConfig, 'key' | 'previousKey'> }): SecretKeys => ({
  current: config.secrets.key,
  previous: config.secrets.previousKey,
});

const derived = new Map<string, Buffer>();
/**
 * A 32-byte key for one purpose, derived from SECRETS_KEY with HKDF-SHA256 (`salt` and `info` name the
 * purpose), so that no two uses of the root key share a key. Derived once per process and purpose.
 */
export function keyDerivedFrom(secretsKey: string, salt: string, info: string): Buffer {
  const name = `${salt}\u0000${info}\u0000${secretsKey}`;
  let key = derived.get(name);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', secretsKey, salt, info, 32));
    derived.set(name, key);
  }
  return key;
}

const keyOf = (secretsKey: string) => keyDerivedFrom(secretsKey, 'opsflow-secrets', 'aes-256-gcm v2');

const legacyKeyOf = (secretsKey: string) => createHash('sha256').update(`opsflow-secrets:${secretsKey}`).digest();
const associatedData = (place: SecretPlace) => Buffer.from(`${place.table}\u0000${place.column}\u0000${place.rowId}`, 'utf8');

export function encryptSecret(plain: string, keys: SecretKeys, place: SecretPlace): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(keys.current), iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(associatedData(place));
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
}

function open(parts: { iv: Buffer; tag: Buffer; ciphertext: Buffer }, key: Buffer, aad: Buffer | null): string | null {
  if (parts.tag.length !== TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, parts.iv, { authTagLength: TAG_BYTES });
    if (aad) decipher.setAAD(aad);
    decipher.setAuthTag(parts.tag);
    return Buffer.concat([decipher.update(parts.ciphertext), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/** The plain secret, and whether it is stored as the current key writes it. Throws SecretTampered. */
function decryptWithKeys(stored: string, keys: SecretKeys, place: SecretPlace, legacy: 'read' | 'refuse'): { plain: string; current: boolean } {
  const [version, iv, tag, ciphertext, extra] = stored.split('.');
  if (version === LEGACY_VERSION && legacy === 'refuse') throw new SecretLegacy();
  if (!iv || !tag || ciphertext === undefined || extra !== undefined) throw new SecretTampered();
  const parts = { iv: Buffer.from(iv, 'base64url'), tag: Buffer.from(tag, 'base64url'), ciphertext: Buffer.from(ciphertext, 'base64url') };
  const candidates = [keys.current, ...(keys.previous ? [keys.previous] : [])];
  for (const [index, secretsKey] of candidates.entries()) {
    const plain =
      version === VERSION
        ? open(parts, keyOf(secretsKey), associatedData(place))
        : version === LEGACY_VERSION
          ? open(parts, legacyKeyOf(secretsKey), null)
          : null;
    if (plain !== null) return { plain, current: version === VERSION && index === 0 };
  }
  throw new SecretTampered();
}

/** The plain secret. Throws SecretTampered, or SecretLegacy for a version-1 ciphertext (secrets:rotate reads those). */
export function decryptSecret(stored: string, keys: SecretKeys, place: SecretPlace): string {
  return decryptWithKeys(stored, keys, place, 'refuse').plain;
}

/** The ciphertext as the current key writes it for this place, or null when it already is. Throws SecretTampered. */
export function reencryptedSecret(stored: string, keys: SecretKeys, place: SecretPlace): string | null {
  const { plain, current } = decryptWithKeys(stored, keys, place, 'read');
  return current ? null : encryptSecret(plain, keys, place);
}
