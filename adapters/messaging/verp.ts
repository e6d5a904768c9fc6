import { createHmac, timingSafeEqual } from 'node:crypto';
import { keyDerivedFrom, SecretKeys } from '../../lib/secrets';

/**
 * VERP: each email's envelope sender names its log row, `bounces+{logId}.{tag}@{domain}`, so the delivery
 * report a relay sends back says which message it is about. The tag (an HMAC of the id under a key derived
 * from SECRETS_KEY) is what makes a report count: the ids are sequential, and without it anyone who can
 * reach the bounce listener could fail any message and suppress any address by naming its id.
 */
const TAG_HEX = 16;

const tagOf = (logId: string, secretsKey: string) =>
  createHmac('sha256', keyDerivedFrom(secretsKey, 'opsflow', 'verp-tag'))
    .update(logId)
    .digest('hex')
    .slice(0, TAG_HEX);

/** The envelope sender of log row `logId`'s message. */
export function verpAddress(logId: string | number, domain: string, keys: SecretKeys): string {
  return `bounces+${logId}.${tagOf(String(logId), keys.current)}@${domain}`;
}

const VERP = new RegExp(`^bounces\\+([1-9][0-9]{0,18})\\.([0-9a-f]{${TAG_HEX}})@(.+)$`, 'i');

/** The log row an address of ours names, when its tag is right (under the current key or the previous one); else null. */
export function logIdOfVerp(address: string, domain: string, keys: SecretKeys): string | null {
  const match = VERP.exec(address.trim());
  if (!match || match[3].toLowerCase() !== domain.toLowerCase()) return null;
  const [, logId, tag] = match;
  const given = Buffer.from(tag.toLowerCase());
  for (const key of [keys.current, keys.previous]) {
    if (key && timingSafeEqual(Buffer.from(tagOf(logId, key)), given)) return logId;
  }
  return null;
}

/** Every address of ours a text mentions (a report quotes the original message's Return-Path), tag unchecked. */
export function verpMentions(text: string, domain: string): string[] {
  const escaped = domain.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return [...text.matchAll(new RegExp(`bounces\\+[0-9]{1,19}\\.[0-9a-f]{${TAG_HEX}}@${escaped}`, 'gi'))].map((match) => match[0]);
}
