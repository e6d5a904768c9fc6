import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { LinkKeys } from '../../lib/link-keys';
import type { EmailCategory } from '../../domain/messaging';

/**
 * The token of a one-click unsubscribe link (RFC 8058): who (site and address) leaves which category.
 * It is sealed (AES-256-GCM under a key derived from SECRETS_KEY, lib/link-keys.ts), so a reader of a log
 * or a forwarded email learns nothing from it, and it cannot be made up or turned into another address's.
 * It needs no row of ours: a link in an old email still works years later, after its log row is archived,
 * and after SECRETS_KEY is rotated (the rotation keeps the old key's link keys).
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

export function unsubscribeToken(grant: UnsubscribeGrant, keys: LinkKeys): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keys.sealing, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(SEALED));
  const plain = JSON.stringify([grant.siteId, grant.address.toLowerCase(), grant.category]);
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return `${SEALED}.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url')}`;
}

/** What a token grants, when one of `candidates` made it (today's keys first, then retired ones); else null. */
export function readUnsubscribeToken(token: string, candidates: LinkKeys[]): UnsubscribeGrant | null {
  const [first, second, ...rest] = token.split('.');
  if (!first || !second || rest.length > 0) return null;
  for (const keys of candidates) {
    const plain = first === SEALED ? opened(second, keys) : signedPayload(first, second, keys);
    if (plain !== null) return grantOf(plain);
  }
  return null;
}

function grantOf(plain: string): UnsubscribeGrant | null {
  try {
    const [siteId, address, category] = JSON.parse(plain) as unknown[];
    if (typeof siteId !== 'string' || typeof address !== 'string' || category !== 'bulk') return null;
    return { siteId, address, category };
  } catch {
    return null;
  }
}

function opened(sealed: string, keys: LinkKeys): string | null {
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length <= IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', keys.sealing, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(SEALED));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/** The payload of a token signed before the sealed form, when its signature is right; else null. */
function signedPayload(payload: string, signature: string, keys: LinkKeys): string | null {
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== SIGNATURE_BYTES) return null;
  const expected = createHmac('sha256', keys.signing).update(payload).digest().subarray(0, SIGNATURE_BYTES);
  return timingSafeEqual(expected, given) ? Buffer.from(payload, 'base64url').toString('utf8') : null;
}
