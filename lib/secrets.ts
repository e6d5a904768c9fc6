import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets at rest: AES-256-GCM with a key derived from SECRETS_KEY. The stored form is
 * `v1.<iv>.<tag>.<ciphertext>` (base64url); a changed byte anywhere fails the authentication tag loudly.
 */
const VERSION = 'v1';

export class SecretTampered extends Error {
  constructor() {
    super('a stored secret failed its integrity check: it was changed, or SECRETS_KEY is not the one that wrote it');
    this.name = 'SecretTampered';
  }
}

function keyOf(secretsKey: string): Buffer {
  return createHash('sha256').update(`opsflow-secrets:${secretsKey}`).digest();
}

export function encryptSecret(plain: string, secretsKey: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secretsKey), iv);
  const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
}

export function decryptSecret(stored: string, secretsKey: string): string {
  const [version, iv, tag, ciphertext] = stored.split('.');
  if (version !== VERSION || !iv || !tag || ciphertext === undefined) throw new SecretTampered();
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyOf(secretsKey), Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretTampered();
  }
}
