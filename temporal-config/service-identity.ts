import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The platform's own identities at the Temporal server's door: a signing key made at first start and kept
 * in the identity folder (the private half readable by its owner alone), its public half as a JWKS the
 * server reads (`file://…/jwks.json`), and short-lived tokens signed with it, each carrying the
 * `permissions` claim of Temporal's default claim mapper (`namespace:role`).
 */
export interface ServiceSigningKey {
  kid: string;
  privateKey: crypto.KeyObject;
  /** The JWKS file the server's key provider reads. */
  jwksFile: string;
  /** Its content: the public half, under the key's id. */
  jwks: string;
}

/** The audience every service token names, and the server checks. */
export const TEMPORAL_TOKEN_AUDIENCE = 'opsflow-temporal';

/** A service token lives this long; a source signs a new one when a third of it is left. */
const TOKEN_SECONDS = 15 * 60;

const base64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/** Loads the signing key of `dir`, making it (and the JWKS beside it) when there is none. */
export function loadOrCreateSigningKey(dir: string): ServiceSigningKey {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const keyFile = path.join(dir, 'signing-key.pem');
  if (!fs.existsSync(keyFile)) {
    const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    // Written whole, and only by the first of the processes starting at once (a link fails where the file
    // is): one that replaced another's key would leave that one signing with a key no server trusts.
    const partial = `${keyFile}.${process.pid}.${crypto.randomUUID()}.tmp`;
    fs.writeFileSync(partial, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    try {
      fs.linkSync(partial, keyFile);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      fs.rmSync(partial, { force: true });
    }
  }
  const key = loadSigningKey(dir);
  if (!fs.existsSync(key.jwksFile) || fs.readFileSync(key.jwksFile, 'utf8') !== key.jwks) {
    const partial = `${key.jwksFile}.${process.pid}.${crypto.randomUUID()}.tmp`;
    fs.writeFileSync(partial, key.jwks, { mode: 0o644 });
    fs.renameSync(partial, key.jwksFile);
  }
  return key;
}

/**
 * The signing key of `dir` as it is, made by no one here: a tool that signs with it must not make a new key
 * where the old one was lost, and rewrite the JWKS the nodes trust under the running processes' feet.
 */
export function loadSigningKey(dir: string): ServiceSigningKey {
  const keyFile = path.join(dir, 'signing-key.pem');
  const jwksFile = path.join(dir, 'jwks.json');
  if (!fs.existsSync(keyFile)) throw new Error(`no Temporal signing key in ${dir} (the platform makes it at first start)`);
  const privateKey = crypto.createPrivateKey(fs.readFileSync(keyFile));
  const jwk = crypto.createPublicKey(privateKey).export({ format: 'jwk' }) as crypto.JsonWebKey;
  const kid = crypto
    .createHash('sha256')
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }))
    .digest('base64url')
    .slice(0, 16);
  return { kid, privateKey, jwksFile, jwks: JSON.stringify({ keys: [{ ...jwk, kid, alg: 'ES256', use: 'sig' }] }) };
}

/** One ES256 token for `subject` with these permissions (`opsflow:write`, `temporal-system:admin`). */
export function signServiceToken(key: ServiceSigningKey, args: { subject: string; permissions: string[]; seconds?: number }): string {
  const now = Math.floor(Date.now() / 1000);
  const header = base64url(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid: key.kid }));
  const claims = base64url(
    JSON.stringify({ sub: args.subject, aud: TEMPORAL_TOKEN_AUDIENCE, iat: now, exp: now + (args.seconds ?? TOKEN_SECONDS), permissions: args.permissions }),
  );
  const signature = crypto.sign('sha256', Buffer.from(`${header}.${claims}`), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${header}.${claims}.${base64url(signature)}`;
}

/**
 * A token source for a client: the current token, signed again once a third of its life is left, so
 * that every call carries one that has not expired.
 */
export function serviceTokenSource(key: ServiceSigningKey, args: { subject: string; permissions: string[] }): () => string {
  let current = { token: '', renewAt: 0 };
  return () => {
    const now = Date.now();
    if (now >= current.renewAt) current = { token: signServiceToken(key, args), renewAt: now + (TOKEN_SECONDS * 1000 * 2) / 3 };
    return current.token;
  };
}

/**
 * Where the administrator's signing key is kept (#58, finding 6): a key of its own, whose JWKS the nodes
 * trust as the only one that may mint admin tokens (`temporal-system:admin`). The setup job and the
 * operator's token tool sign with it; the API and the workers never read it. TEMPORAL_ADMIN_IDENTITY_DIR
 * where set (compose: a volume of its own), else a folder inside the workload key's (`npm start`, tests).
 */
export const adminIdentityDirOf = (identityDir: string, configured?: string | null): string => configured || path.join(identityDir, 'admin');

/** What each of the platform's processes may do in its namespace: write it (start, signal, schedules), nothing else. */
export const servicePermissions = (namespace: string) => [`${namespace}:write`];

/** The token source of one of the platform's processes, or null where the server checks no tokens (no identity folder). */
export function serviceTokenOf(identity: { dir: string | null; subject: string } | undefined, namespace: string): (() => string) | null {
  if (!identity?.dir) return null;
  return serviceTokenSource(loadOrCreateSigningKey(identity.dir), { subject: identity.subject, permissions: servicePermissions(namespace) });
}
