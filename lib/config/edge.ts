import fs from 'node:fs';
import { ConfigError, Env, hostAndPort, integer, matching, optional, port, url } from './read';

/** The edge (Envoy) in front of the API, and the ACME server that issues its certificates. */
export interface EdgeConfig {
  /** The folder of the edge's xDS files: the API writes them (it is the edge's control plane) when this is set. */
  dir: string | null;
  /** Envoy's admin: the API's readiness and metrics include it, and deploy runs confirm their routing changes there. */
  adminUrl: string | null;
  /** How the edge reaches the Koa API (`host:port`). */
  apiAddress: { host: string; port: number };
  /** How long the edge waits to connect to a service's instance, and how long a connection to one may sit idle (no total timeout: answers may stream). */
  connectTimeoutMs: number;
  idleTimeoutSeconds: number;
  /** Where the edge serves HTTPS, once it holds a certificate (EDGE_TLS_PORT). */
  tlsPort: number;
  /** The HTTPS port clients see, where plain HTTP redirects them (EDGE_TLS_PUBLIC_PORT; a container's published port). */
  tlsPublicPort: number;
  /** The ACME server that issues the edge's certificates, or null: none is ordered. */
  acme: AcmeConfig | null;
}

export interface AcmeConfig {
  /** The ACME server's directory (ACME_DIRECTORY_URL): Let's Encrypt's in production, Pebble's under `npm start`. */
  directoryUrl: string;
  /** The address the ACME server may write to about the account (ACME_EMAIL). */
  email: string | null;
  /** The CA bundle the ACME server's own HTTPS must chain to (ACME_CA_FILE), or null for the system's. */
  caFile: string | null;
  /** How often the renewal schedule looks for certificates due (ACME_RENEWAL_CHECK_SECONDS). */
  renewalCheckSeconds: number;
  /** How long after a failed attempt the schedule tries again (ACME_RETRY_SECONDS). */
  retryAfterSeconds: number;
}

const LETS_ENCRYPT_DIRECTORY = 'https://acme-v02.api.letsencrypt.org/directory';

/** The ACME server: Let's Encrypt's by default in production, none in development unless one is named. */
function acmeSettings(env: Env, production: boolean): AcmeConfig | null {
  if (env.ACME_DIRECTORY_URL === 'off') return null;
  const directoryUrl = url(env, 'ACME_DIRECTORY_URL', production ? LETS_ENCRYPT_DIRECTORY : null, production ? ['https:'] : ['https:', 'http:']);
  if (directoryUrl === null) return null;
  const caFile = optional(env, 'ACME_CA_FILE');
  if (caFile && !fs.existsSync(caFile)) throw new ConfigError('ACME_CA_FILE', `no such file: ${caFile} (the CA bundle of the ACME server's HTTPS)`);
  const email = optional(env, 'ACME_EMAIL') && matching(env, 'ACME_EMAIL', '', /^[^\s@<>]+@[^\s@<>]+$/, 'an email address');
  return {
    directoryUrl,
    email: email || null,
    caFile,
    renewalCheckSeconds: integer(env, 'ACME_RENEWAL_CHECK_SECONDS', 3600, 1, 86400),
    retryAfterSeconds: integer(env, 'ACME_RETRY_SECONDS', 3600, 1, 7 * 86400),
  };
}

/** The edge's settings; its defaults follow the API's ports (API_PORT, and API_LISTEN_PORT where the edge reaches the API). */
export function edgeConfig(env: Env, production: boolean, api: { port: number; listenPort: number }): EdgeConfig {
  const tlsPort = port(env, 'EDGE_TLS_PORT', api.port + 3);
  return {
    dir: optional(env, 'EDGE_DIR'),
    adminUrl: url(env, 'EDGE_ADMIN_URL', null, ['http:'])?.replace(/\/+$/, '') ?? null,
    apiAddress: hostAndPort(env, 'EDGE_API_ADDRESS', `127.0.0.1:${api.listenPort}`),
    connectTimeoutMs: integer(env, 'EDGE_CONNECT_TIMEOUT_MS', 1000, 10, 60000),
    idleTimeoutSeconds: integer(env, 'EDGE_IDLE_TIMEOUT_SECONDS', 300, 1, 86400),
    tlsPort,
    tlsPublicPort: port(env, 'EDGE_TLS_PUBLIC_PORT', tlsPort),
    acme: acmeSettings(env, production),
  };
}
