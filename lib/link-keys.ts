import { createHash } from 'node:crypto';
import { keyDerivedFrom } from './secrets';

/**
 * The keys of unsubscribe links, derived from one SECRETS_KEY: `sealing` seals today's tokens, `signing`
 * checked the signed ones issued before. A link lives as long as a mailbox keeps it, so the keys of a
 * SECRETS_KEY that was rotated away are kept (sealed) by the rotation command: links made under it still work.
 */
export interface LinkKeys {
  sealing: Buffer;
  signing: Buffer;
}

export const linkKeysOf = (secretsKey: string): LinkKeys => ({
  sealing: keyDerivedFrom(secretsKey, 'opsflow', 'unsubscribe-link sealed'),
  signing: keyDerivedFrom(secretsKey, 'opsflow', 'unsubscribe-link'),
});

/** A name for one SECRETS_KEY's link keys that gives nothing away: a hash of them. */
export const linkKeysFingerprint = (keys: LinkKeys): string => createHash('sha256').update(keys.sealing).update(keys.signing).digest('hex').slice(0, 32);
