import { ConfigError, Env, oneOf, optional, text, url } from './read';

/** The Temporal cluster the platform's clients and workers reach, and how they sign, verify and encrypt. */
export interface TemporalConfig {
  address: string;
  /** What `npm start` runs for Temporal: the dev server (fast to start) or a cluster of two nodes on PostgreSQL. */
  server: 'dev' | 'cluster';
  /**
   * Where the platform's Temporal signing key is kept (TEMPORAL_IDENTITY_DIR): set where the server checks
   * tokens (cluster mode, compose), so that every client signs its own short-lived service token.
   */
  identityDir: string | null;
  /**
   * Where the administrator's Temporal signing key is kept (TEMPORAL_ADMIN_IDENTITY_DIR): read by the setup
   * job alone; unset, a folder `admin` inside TEMPORAL_IDENTITY_DIR (`npm start`).
   */
  adminIdentityDir: string | null;
  /** The authority Temporal's frontend certificate is verified against (TEMPORAL_TLS_CA_FILE): set, every client speaks TLS to it. */
  tlsCaFile: string | null;
  /** Where the migrate job makes the cluster's certificates (TEMPORAL_TLS_DIR, the nodes read it too); else beside the signing key. */
  tlsDir: string | null;
  /** Where the migrate job puts the public halves the nodes and clients read (TEMPORAL_PUBLIC_DIR): the authority and the JWKS. */
  publicDir: string | null;
  /** The nodes behind TEMPORAL_ADDRESS, each checked by /readyz (npm start sets it in cluster mode). */
  nodes: Array<{ name: string; address: string }>;
  namespace: string;
  uiUrl: string;
  /** Keys of the payload codec, the first encrypting, every one decrypting (TEMPORAL_PAYLOAD_KEYS). */
  payloadKeys: PayloadKeySetting[];
}

/** One key of Temporal's payload codec: its id, written beside every payload it encrypts, and its secret. */
export interface PayloadKeySetting {
  id: string;
  secret: string;
}

/** The development payload key: refused outside development like the other development secrets. */
export const DEV_PAYLOAD_KEYS = 'dev1:opsflow-dev-payload-key-change-me';

/**
 * TEMPORAL_PAYLOAD_KEYS: `id:secret` pairs, comma-separated, newest first. The first encrypts what is written
 * now; the others still decrypt the histories of runs that began under them, so a rotation puts the new key
 * first and keeps the old one until no run written under it can be open (or replayed).
 */
function payloadKeys(env: Env, production: boolean): PayloadKeySetting[] {
  const raw = text(env, 'TEMPORAL_PAYLOAD_KEYS', DEV_PAYLOAD_KEYS);
  if (production && raw.split(',').some((entry) => DEV_PAYLOAD_KEYS.split(',').includes(entry.trim()))) {
    throw new ConfigError('TEMPORAL_PAYLOAD_KEYS', 'the development default is refused outside development (NODE_ENV is not development or test)');
  }
  const keys = raw.split(',').map((entry) => {
    const separator = entry.indexOf(':');
    const id = entry.slice(0, separator).trim();
    const secret = entry.slice(separator + 1).trim();
    if (separator < 1 || !/^[A-Za-z0-9._-]{1,64}$/.test(id))
      throw new ConfigError('TEMPORAL_PAYLOAD_KEYS', 'each entry must be id:secret, the id of letters, digits, dot, dash or underscore (at most 64)');
    if (secret.length < 16) throw new ConfigError('TEMPORAL_PAYLOAD_KEYS', `the secret of key ${id} must be at least 16 characters`);
    return { id, secret };
  });
  if (new Set(keys.map((key) => key.id)).size !== keys.length) throw new ConfigError('TEMPORAL_PAYLOAD_KEYS', 'a key id appears twice');
  return keys;
}

/** TEMPORAL_NODES: `name=host:port` entries, comma-separated. */
function temporalNodes(env: Env): Array<{ name: string; address: string }> {
  return (optional(env, 'TEMPORAL_NODES') ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const parsed = /^([A-Za-z0-9._-]{1,64})=([A-Za-z0-9.[\]:-]+:[0-9]{1,5})$/.exec(entry);
      if (!parsed) throw new ConfigError('TEMPORAL_NODES', `each entry must be name=host:port, got "${entry}"`);
      return { name: parsed[1], address: parsed[2] };
    });
}

export function temporalConfig(env: Env, production: boolean): TemporalConfig {
  const uiUrl = url(env, 'TEMPORAL_UI_URL', 'http://127.0.0.1:8233', ['http:', 'https:']) as string;
  return {
    address: text(env, 'TEMPORAL_ADDRESS', '127.0.0.1:7233'),
    server: oneOf(env, 'TEMPORAL_SERVER', 'dev', ['dev', 'cluster'] as const),
    nodes: temporalNodes(env),
    identityDir: optional(env, 'TEMPORAL_IDENTITY_DIR'),
    adminIdentityDir: optional(env, 'TEMPORAL_ADMIN_IDENTITY_DIR'),
    tlsCaFile: optional(env, 'TEMPORAL_TLS_CA_FILE'),
    tlsDir: optional(env, 'TEMPORAL_TLS_DIR'),
    publicDir: optional(env, 'TEMPORAL_PUBLIC_DIR'),
    namespace: text(env, 'TEMPORAL_NAMESPACE', 'default'),
    uiUrl: uiUrl.replace(/\/+$/, ''),
    payloadKeys: payloadKeys(env, production),
  };
}
