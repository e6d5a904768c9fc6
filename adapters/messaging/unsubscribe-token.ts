import { createHmac, timingSafeEqual } from 'node:crypto';
import { keyDerivedFrom, SecretKeys } from '../../lib/secrets';
import type { EmailCategory } from '../../domain/messaging';

/**
 * The token of a one-click unsubscribe link (RFC 8058): who (site and address) leaves which category,
 * signed with an HMAC under a key derived from SECRETS_KEY. It names its address, so it cannot be turned
 * into another's, and it cannot be made up; it needs no row of ours to stay valid (a link in an old email
 * still works after its log row is archived).
 */
export interface UnsubscribeGrant {
  siteId: string;
  address: string;
  category: Exclude<EmailCategory, 'transactional'>;
}

const SIGNATURE_BYTES = 16;

const signatureOf = (payload: string, secretsKey: string) =>
  createHmac('sha256', keyDerivedFrom(secretsKey, 'opsflow', 'unsubscribe-link'))
    .update(payload)
    .digest()
    .subarray(0, SIGNATURE_BYTES);

export function unsubscribeToken(grant: UnsubscribeGrant, keys: SecretKeys): string {
  const payload = Buffer.from(JSON.stringify([grant.siteId, grant.address.toLowerCase(), grant.category])).toString('base64url');
  return `${payload}.${signatureOf(payload, keys.current).toString('base64url')}`;
}

/** What a token grants, when its signature is right (under the current key or the previous one); else null. */
export function readUnsubscribeToken(token: string, keys: SecretKeys): UnsubscribeGrant | null {
  const [payload, signature, ...rest] = token.split('.');
  if (!payload || !signature || rest.length > 0) return null;
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== SIGNATURE_BYTES) return null;
  const signed = [keys.current, keys.previous].some((key) => key && timingSafeEqual(signatureOf(payload, key), given));
  if (!signed) return null;
  try {
    const [siteId, address, category] = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown[];
    if (typeof siteId !== 'string' || typeof address !== 'string' || category !== 'bulk') return null;
    return { siteId, address, category };
  } catch {
    return null;
  }
}
