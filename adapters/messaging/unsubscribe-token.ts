import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { keyDerivedFrom, SecretKeys } from '../../lib/secrets';
import type { EmailCategory } from '../../domain/messaging';

/**
 * The token of a one-click unsubscribe link (RFC 8058): who (site and address) leaves which category.
 * It is sealed (AES-256-GCM under a key derived from SECRETS_KEY), so a reader of a log or a forwarded email
 * learns nothing from it, and it cannot be made up or turned into another address's. It needs no row of
 * ours to stay valid: a link in an old email still works years later, after its log row is archived.
 *
 * Tokens issued before the sealed form (`{payload}.{signature}`: the payload in the clear, signed with an
 * HMAC) are still read, because those links sit in mailboxes and must keep working.
 */
export interface UnsubscribeGrant {
  siteId: string;
  address: string;
  category: Exclude<EmailCategory, 'transactional'>;
}

/** The first part of a sealed token. A signed token's first part is base64url of a JSON array, `WyI…`. */
const SEALED = 's1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const SIGNATURE_BYTES = 16;

const sealingKeyOf = (secretsKey: string) => keyDerivedFrom(secretsKey, 'opsflow', 'unsubscribe-link sealed');
const signatureOf = (payload: string, secretsKey: string) =>
  createHmac('sha256', keyDerivedFrom(secretsKey, 'opsflow', 'unsubscribe-link'))
    .update(payload)
    .digest()
    .subarray(0, SIGNATURE_BYTES);

export function unsubscribeToken(grant: UnsubscribeGrant, keys: SecretKeys): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', sealingKeyOf(keys.current), iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(SEALED));
  const plain = JSON.stringify([grant.siteId, grant.address.toLowerCase(), grant.category]);
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `${SEALED}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')}`;
}

/** What a token grants, when it is one of ours (under the current key or the previous one); else null. */
export function readUnsubscribeToken(token: string, keys: SecretKeys): UnsubscribeGrant | null {
  const [first, second, ...rest] = token.split('.');
  if (!first || !second || rest.length > 0) return null;
  const plain = first === SEALED ? opened(second, keys) : signedPayload(first, second, keys);
  if (plain === null) return null;
  try {
    const [siteId, address, category] = JSON.parse(plain) as unknown[];
    if (typeof siteId !== 'string' || typeof address !== 'string' || category !== 'bulk') return null;
    return { siteId, address, category };
  } catch {
    return null;
  }
}

function opened(sealed: string, keys: SecretKeys): string | null {
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length <= IV_BYTES + TAG_BYTES) return null;
  for (const key of [keys.current, keys.previous]) {
    if (!key) continue;
    try {
      const decipher = createDecipheriv('aes-256-gcm', sealingKeyOf(key), bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(SEALED));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      // Not sealed under this key: try the previous one.
    }
  }
  return null;
}

/** The payload of a token signed before the sealed form, when its signature is right; else null. */
function signedPayload(payload: string, signature: string, keys: SecretKeys): string | null {
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== SIGNATURE_BYTES) return null;
  const signed = [keys.current, keys.previous].some((key) => key && timingSafeEqual(signatureOf(payload, key), given));
  return signed ? Buffer.from(payload, 'base64url').toString('utf8') : null;
}
