import fs from 'node:fs';

/**
 * The platform's configuration, parsed once from the environment. Everything else reads this typed
 * object, never `process.env`. Invalid configuration stops start-up with one line naming the variable.
 */
export interface Config {
  nodeEnv: string;
  /**
   * Everything but NODE_ENV `development` or `test` (`npm start` sets `development`): development
   * secrets are refused and the outbound guard is on. Fail closed: an unset or misspelt NODE_ENV is production.
   */
  production: boolean;
  /** The address the API listens on: loopback unless said otherwise (the container image says 0.0.0.0). */
  apiHost: string;
  /** The platform's front door: where the edge (Envoy) listens, or the API itself when there is no edge. */
  apiPort: number;
  /** Where the Koa API itself listens: behind the edge, API_PORT + 1 unless said; API_PORT without an edge. */
  apiListenPort: number;
  /** The folder of the edge's xDS files: the API writes them (it is the edge's control plane) when this is set. */
  edgeDir: string | null;
  /** Envoy's admin: the API's readiness and metrics include it, and deploy runs confirm their routing changes there. */
  edgeAdminUrl: string | null;
  /** How the edge reaches the Koa API (`host:port`). */
  edgeApiAddress: { host: string; port: number };
  /** How long the edge waits to connect to a service's instance, and how long a connection to one may sit idle (no total timeout: answers may stream). */
  edgeConnectTimeoutMs: number;
  edgeIdleTimeoutSeconds: number;
  /** Where the edge serves HTTPS, once it holds a certificate (EDGE_TLS_PORT). */
  edgeTlsPort: number;
  /** The HTTPS port clients see, where plain HTTP redirects them (EDGE_TLS_PUBLIC_PORT; a container's published port). */
  edgeTlsPublicPort: number;
  /** The ACME server that issues the edge's certificates, or null: none is ordered. */
  acme: AcmeConfig | null;
  /** Where workers reach the API's internal endpoints (the archive sink). */
  apiInternalUrl: string;
  /** Where people reach the platform: the links in the emails it sends (approval notices). */
  publicUrl: string;
  databaseUrl: string;
  temporalAddress: string;
  /** What `npm start` runs for Temporal: the dev server (fast to start) or a cluster of two nodes on PostgreSQL. */
  temporalServer: 'dev' | 'cluster';
  /**
   * Where the platform's Temporal signing key is kept (TEMPORAL_IDENTITY_DIR): set where the server checks
   * tokens (cluster mode, compose), so that every client signs its own short-lived service token.
   */
  temporalIdentityDir: string | null;
  /**
   * Where the administrator's Temporal signing key is kept (TEMPORAL_ADMIN_IDENTITY_DIR): read by the setup
   * job alone; unset, a folder `admin` inside TEMPORAL_IDENTITY_DIR (`npm start`).
   */
  temporalAdminIdentityDir: string | null;
  /** The authority Temporal's frontend certificate is verified against (TEMPORAL_TLS_CA_FILE): set, every client speaks TLS to it. */
  temporalTlsCaFile: string | null;
  /** Where the migrate job makes the cluster's certificates (TEMPORAL_TLS_DIR, the nodes read it too); else beside the signing key. */
  temporalTlsDir: string | null;
  /** Where the migrate job puts the public halves the nodes and clients read (TEMPORAL_PUBLIC_DIR): the authority and the JWKS. */
  temporalPublicDir: string | null;
  /** The nodes behind TEMPORAL_ADDRESS, each checked by /readyz (npm start sets it in cluster mode). */
  temporalNodes: Array<{ name: string; address: string }>;
  temporalNamespace: string;
  temporalUiUrl: string;
  /** Keys of the payload codec, the first encrypting, every one decrypting (TEMPORAL_PAYLOAD_KEYS). */
  temporalPayloadKeys: PayloadKeySetting[];
  jwtSecret: string;
  jwtJwksUrl: string | null;
  /** The CA bundle the edge verifies the JWKS server's certificate against (JWT_JWKS_CA_FILE, else the system's). */
  jwtJwksCaFile: string;
  jwtIssuer: string | null;
  jwtAudience: string | null;
  /** The console's client id at the identity provider (JWT_ISSUER): its "sign in with your organisation" button; null without one. */
  oidcClientId: string | null;
  oidcScope: string;
  internalToken: string;
  secretsKey: string;
  /** Bytes of files a site may store (archive files aside); an upload past it answers 413 QUOTA_EXCEEDED. */
  assetQuotaBytesPerSite: number;
  /** Email sends per user (a single or a bulk send counts once) within `sendRateWindowSeconds`; more answer 429. */
  sendRateLimit: number;
  sendRateWindowSeconds: number;
  /** Token-minting sign-ins (the code exchange, development sign-in) per client address within `signInRateWindowSeconds`; more answer 429. */
  signInRateLimit: number;
  signInRateWindowSeconds: number;
  /** The key before SECRETS_KEY during a rotation: it still decrypts until `npm run secrets:rotate` has re-encrypted everything. */
  secretsKeyPrevious: string | null;
  dataDir: string;
  dockerHost: string | null;
  /** Where deployed services run: `docker` (containers on the engine beside the deploy worker) or `swarm` (services of a Docker Swarm). */
  deployDriver: DeployDriverName;
  /** The registry (`host:port`) JAR images are pushed to, so that every swarm node runs the same bytes; the swarm driver needs one. */
  deployRegistry: string | null;
  deployBaseImage: string;
  /**
   * What a JAR deploy does when the base image is missing: `none` leaves it to the engine (a pull, in
   * production), `debian` builds it from Debian packages (debootstrap), as `npm start` sets for a machine
   * that reaches no image registry.
   */
  deployBaseImageBuild: 'none' | 'debian';
  /** The prefix of each deployed service's own network (`{prefix}-{service}`). */
  deployNetwork: string;
  /** Containers joined to every service network: the gateway and the health checks when they run in containers (docker compose). */
  deployAttachContainers: string[];
  /** Prefix of deploy image names and value of the `opsflow.scope` label: separates platforms sharing one engine. */
  deployScope: string;
  /** Host address a deploy's `hostPort` binds on. */
  deployHostBind: string;
  deployMemoryMb: number;
  deployPidsLimit: number;
  /** CPUs each deployed container may use (a CFS quota; fractions allowed). */
  deployCpus: number;
  /** Log rotation of every deployed container: the size of one file (Docker's `max-size`) and how many are kept. */
  deployLogMaxSize: string;
  deployLogMaxFiles: number;
  /** Whether a deploy may bind a host port below 1024 (privileged on the host); refused unless set. */
  deployAllowLowHostPorts: boolean;
  /** How long a new instance has to answer its health check. */
  deployHealthTimeoutSeconds: number;
  /** How long replaced instances keep serving requests already routed to them before they stop. */
  deployDrainSeconds: number;
  /** How often the reconcile schedule compares desired and running instances. */
  deployReconcileSeconds: number;
  maxJarBytes: number;
  smtpCapturePort: number;
  mailCaptureUiPort: number;
  /** The From of every email sent. */
  mailFrom: string;
  /**
   * The domain of every email's envelope sender, `bounces+{logId}@{domain}` (VERP), whose mail reaches the
   * bounce listener; unset: the envelope sender is MAIL_FROM's address and no report names its message.
   */
  bounceDomain: string | null;
  /** Where the API takes delivery and complaint reports by SMTP; null (BOUNCE_SMTP_PORT unset): nowhere. */
  bounceSmtp: { host: string; port: number } | null;
  /** The peers outbound calls may reach in production although they are private: each for one purpose, on one port. */
  outboundAllow: OutboundAllowance[];
  archiveCron: string;
  /** When the revision retention job runs (UTC, five fields). */
  revisionRetentionCron: string;
  /** The format of archive files for a policy that names none (ARCHIVE_FORMAT). */
  archiveFormat: (typeof ARCHIVE_FORMAT_NAMES)[number];
  /**
   * Where new archive files go (ARCHIVE_SINK): `file`, the API's own asset folder, or `s3`, the bucket of
   * `archiveS3`. Files already stored stay readable where they are, whichever sink is set later.
   */
  archiveSink: 'file' | 's3';
  /** The S3-compatible store (ARCHIVE_S3_*); its credentials are set by an ADMIN and kept encrypted in the database. */
  archiveS3: ArchiveS3Settings | null;
  logLevel: string;
  workflowBundlePath: string | null;
}

/** Where archive files are written in an S3-compatible store; the credentials are not here (see data/archival/sink-credentials). */
export interface ArchiveS3Settings {
  /** The store's base URL, e.g. https://s3.eu-west-1.amazonaws.com or http://seaweedfs.internal:8333. */
  endpoint: string;
  bucket: string;
  /** Put before every object's key: `{prefix}{siteId}/{file name}`; empty or ending in `/`. */
  prefix: string;
  region: string;
  /** Bucket in the path (`{endpoint}/{bucket}/…`), as most self-hosted stores need; false: virtual-host style. */
  forcePathStyle: boolean;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

/**
 * What an outbound call is for: an SMTP relay, a REST or SOAP peer (a channel's or a SOAP component's), the
 * identity provider (its JWKS, and for OIDC sign-in its discovery and token endpoints), a site's status callback,
 * an S3-compatible archive store.
 */
export const OUTBOUND_PURPOSES = ['smtp', 'rest', 'soap', 'jwks', 'callback', 's3'] as const;
export type OutboundPurpose = (typeof OUTBOUND_PURPOSES)[number];

/** One OUTBOUND_ALLOW entry: `purpose:host:port`, an IPv6 host in brackets. */
export interface OutboundAllowance {
  purpose: OutboundPurpose;
  /** Lower case; an IPv6 address without its brackets. */
  host: string;
  port: number;
}

/**
 * OUTBOUND_ALLOW: a host allowed for one purpose on one port only, so that allowing an internal relay does
 * not let an editor's SOAP component reach it, on that port or any other. A bare host is refused, not read
 * as "every purpose": that was the hole.
 */
function outboundAllowances(env: Env): OutboundAllowance[] {
  const entries = (optional(env, 'OUTBOUND_ALLOW') ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  return entries.map((entry) => {
    const parsed = /^([a-z0-9]+):(\[[0-9a-fA-F:.]+\]|[^:[\]\s]+):([0-9]{1,5})$/.exec(entry);
    const purpose = parsed?.[1] as OutboundPurpose | undefined;
    const portNumber = Number(parsed?.[3]);
    if (!parsed || !OUTBOUND_PURPOSES.includes(purpose!) || portNumber < 1 || portNumber > 65535) {
      throw new ConfigError(
        'OUTBOUND_ALLOW',
        `each entry must be purpose:host:port, the purpose one of ${OUTBOUND_PURPOSES.join(', ')} (e.g. smtp:relay.internal:587, soap:[fd00::7]:8443); got "${entry}"`,
      );
    }
    return { purpose: purpose!, host: parsed[2].replace(/^\[|\]$/g, '').toLowerCase(), port: portNumber };
  });
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

export const DEV_DEFAULTS = {
  JWT_SECRET: 'opsflow-dev-secret',
  INTERNAL_TOKEN: 'opsflow-internal-dev-token',
  SECRETS_KEY: 'opsflow-dev-secrets-key-change-me',
} as const;

type Env = Record<string, string | undefined>;

function oneOf<T extends string>(env: Env, name: string, fallback: T, choices: readonly T[]): T {
  const value = optional(env, name) ?? fallback;
  if (!choices.includes(value as T)) throw new ConfigError(name, `must be one of ${choices.join(', ')}, got "${value}"`);
  return value as T;
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

function text(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

function optional(env: Env, name: string): string | null {
  const value = env[name];
  return value === undefined || value === '' ? null : value;
}

function port(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    throw new ConfigError(name, `must be a port number (0-65535), got "${raw}"`);
  }
  return value;
}

function url(env: Env, name: string, fallback: string | null, protocols: string[]): string | null {
  const value = optional(env, name) ?? fallback;
  if (value === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(name, 'must be a URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')}`);
  }
  return value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function decimal(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || value > max) throw new ConfigError(name, `must be a number from ${min} to ${max}, got "${raw}"`);
  return value;
}

function matching(env: Env, name: string, fallback: string, pattern: RegExp, what: string): string {
  const value = text(env, name, fallback);
  if (!pattern.test(value)) throw new ConfigError(name, `must be ${what}, got "${value}"`);
  return value;
}

function hostAndPort(env: Env, name: string, fallback: string): { host: string; port: number } {
  const value = text(env, name, fallback);
  const parts = /^([A-Za-z0-9._-]+):(\d{1,5})$/.exec(value);
  if (!parts || Number(parts[2]) > 65535) throw new ConfigError(name, `must be host:port, got "${value}"`);
  return { host: parts[1], port: Number(parts[2]) };
}

function flag(env: Env, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function cron(env: Env, name: string, fallback: string): string {
  const value = text(env, name, fallback);
  if (value.trim().split(/\s+/).length !== 5) {
    throw new ConfigError(name, `must be a five-field cron expression, got "${value}"`);
  }
  return value;
}

function dockerName(env: Env, name: string, fallback: string): string {
  const value = text(env, name, fallback);
  if (!/^[a-z0-9][a-z0-9._-]{0,62}$/.test(value)) throw new ConfigError(name, `must be a lower-case Docker name, got "${value}"`);
  return value;
}

/**
 * Container names, each exact or a prefix ending in `*` (compose's numbered replicas). A prefix is at least
 * four characters and the `*` only at the end: a bare `*` would join every container on the engine to every
 * service's network.
 */
function attachList(env: Env, name: string): string[] {
  const entries = (env[name] ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const exactName = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
  const prefix = /^[A-Za-z0-9][A-Za-z0-9_.-]{3,}\*$/;
  const bad = entries.find((entry) => !exactName.test(entry) && !prefix.test(entry));
  if (bad !== undefined) throw new ConfigError(name, `"${bad}" is not a container name, or a prefix of four or more characters ending in *`);
  return entries;
}

export const DEPLOY_DRIVERS = ['docker', 'swarm'] as const;
/** The formats an archive file can be written in (domain/archival names them for every layer). */
const ARCHIVE_FORMAT_NAMES = ['csv', 'parquet'] as const;
export type DeployDriverName = (typeof DEPLOY_DRIVERS)[number];

/** The deploy driver, and the registry the swarm driver cannot work without: a node pulls its image from there. */
function baseImageBuild(env: Env): Config['deployBaseImageBuild'] {
  const build = text(env, 'DEPLOY_BASE_IMAGE_BUILD', 'none');
  if (build !== 'none' && build !== 'debian') throw new ConfigError('DEPLOY_BASE_IMAGE_BUILD', `must be none or debian, got "${build}"`);
  return build;
}

function deployDriverSettings(env: Env): Pick<Config, 'deployDriver' | 'deployRegistry'> {
  const driver = text(env, 'DEPLOY_DRIVER', 'docker');
  if (!(DEPLOY_DRIVERS as readonly string[]).includes(driver))
    throw new ConfigError('DEPLOY_DRIVER', `must be ${DEPLOY_DRIVERS.join(' or ')}, got "${driver}"`);
  const registry = optional(env, 'DEPLOY_REGISTRY');
  if (registry !== null && !/^[A-Za-z0-9.-]+:\d{1,5}$/.test(registry)) throw new ConfigError('DEPLOY_REGISTRY', `must be host:port, got "${registry}"`);
  if (driver === 'swarm' && registry === null)
    throw new ConfigError('DEPLOY_REGISTRY', 'must be set when DEPLOY_DRIVER is swarm: every node pulls its image from the registry');
  return { deployDriver: driver as DeployDriverName, deployRegistry: registry };
}

function secret(env: Env, name: keyof typeof DEV_DEFAULTS, production: boolean, minLength: number): string {
  const value = text(env, name, DEV_DEFAULTS[name]);
  if (production && value === DEV_DEFAULTS[name]) {
    throw new ConfigError(name, 'the development default is refused outside development (NODE_ENV is not development or test)');
  }
  if (value.length < minLength) throw new ConfigError(name, `must be at least ${minLength} characters`);
  return value;
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

/** Debian's bundle of the system's trusted CAs (package ca-certificates). */
const SYSTEM_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/** The NODE_ENV values under which development rules apply; any other value, or none, is production. */
export const DEVELOPMENT_ENVS = ['development', 'test'];

/**
 * With a JWKS (an identity provider's keys), tokens must name that provider and this platform: an issuer
 * and an audience are required, and outside development the keys come over https only.
 */
function jwksSettings(
  env: Env,
  production: boolean,
): Pick<Config, 'jwtJwksUrl' | 'jwtJwksCaFile' | 'jwtIssuer' | 'jwtAudience' | 'oidcClientId' | 'oidcScope'> {
  const jwtJwksUrl = url(env, 'JWT_JWKS_URL', null, production ? ['https:'] : ['https:', 'http:']);
  const jwtIssuer = optional(env, 'JWT_ISSUER');
  const jwtAudience = optional(env, 'JWT_AUDIENCE');
  if (jwtJwksUrl && !jwtIssuer) throw new ConfigError('JWT_ISSUER', 'is required with JWT_JWKS_URL (the issuer tokens must name)');
  if (jwtJwksUrl && !jwtAudience) throw new ConfigError('JWT_AUDIENCE', 'is required with JWT_JWKS_URL (the audience tokens must name)');
  const oidcClientId = optional(env, 'OIDC_CLIENT_ID');
  if (oidcClientId && !jwtJwksUrl)
    throw new ConfigError('OIDC_CLIENT_ID', 'needs JWT_JWKS_URL, JWT_ISSUER and JWT_AUDIENCE (the provider whose tokens the platform accepts)');
  // An ID token names the console's client as its audience: were that JWT_AUDIENCE, the edge (which cannot
  // look at a token's type) would take an ID token for an access token.
  if (oidcClientId && oidcClientId === jwtAudience)
    throw new ConfigError('JWT_AUDIENCE', 'must differ from OIDC_CLIENT_ID: ID tokens name the client as their audience, and would pass for access tokens');
  const jwtJwksCaFile = text(env, 'JWT_JWKS_CA_FILE', SYSTEM_CA_BUNDLE);
  if ((env.JWT_JWKS_CA_FILE || jwtJwksUrl?.startsWith('https:')) && !fs.existsSync(jwtJwksCaFile)) {
    throw new ConfigError('JWT_JWKS_CA_FILE', `no such file: ${jwtJwksCaFile} (the CA bundle the edge verifies the JWKS server against)`);
  }
  return { jwtJwksUrl, jwtJwksCaFile, jwtIssuer, jwtAudience, oidcClientId, oidcScope: optional(env, 'OIDC_SCOPE') ?? 'openid profile email' };
}

/** VERP's domain and the bounce listener: the listener takes reports only for that domain's addresses. */
function bounceSettings(env: Env): Pick<Config, 'bounceDomain' | 'bounceSmtp'> {
  const bounceDomain =
    optional(env, 'BOUNCE_DOMAIN') &&
    matching(env, 'BOUNCE_DOMAIN', '', /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i, 'a domain name');
  if (optional(env, 'BOUNCE_SMTP_PORT') === null) return { bounceDomain, bounceSmtp: null };
  if (!bounceDomain) throw new ConfigError('BOUNCE_DOMAIN', 'is required with BOUNCE_SMTP_PORT (the domain of the addresses reports come to)');
  return { bounceDomain, bounceSmtp: { host: text(env, 'BOUNCE_SMTP_HOST', '127.0.0.1'), port: port(env, 'BOUNCE_SMTP_PORT', 0) } };
}

/**
 * An S3 store's endpoint as the platform names it, whoever names it (ARCHIVE_S3_ENDPOINT or a policy): its
 * origin and path, without trailing slashes, so that one store has one name.
 */
export const storeEndpointOf = (url: URL): string => `${url.origin}${url.pathname}`.replace(/\/+$/, '');

/**
 * ARCHIVE_SINK, and the platform's S3 store (ARCHIVE_S3_*) when an endpoint is set: for ARCHIVE_SINK=s3, which
 * requires it, and for `s3` policies that name no store of their own. Nothing is guessed: an endpoint is an
 * http(s) origin and path with no user info, query or fragment (https in production), and needs its bucket.
 */
function archiveSinkSettings(env: Env, production: boolean): Pick<Config, 'archiveSink' | 'archiveS3'> {
  const archiveSink = oneOf(env, 'ARCHIVE_SINK', 'file', ['file', 's3'] as const);
  const endpoint = url(env, 'ARCHIVE_S3_ENDPOINT', null, production ? ['https:'] : ['http:', 'https:']);
  if (endpoint === null) {
    if (archiveSink === 's3') throw new ConfigError('ARCHIVE_S3_ENDPOINT', "is required when ARCHIVE_SINK is s3 (the store's URL)");
    return { archiveSink, archiveS3: null };
  }
  const parsed = new URL(endpoint);
  if (parsed.username || parsed.password || parsed.search || parsed.hash)
    throw new ConfigError('ARCHIVE_S3_ENDPOINT', 'must carry no user info, query or fragment (the keys are set through the API, kept encrypted)');
  // S3's own rule for bucket names: 3 to 63 lower-case letters, digits, dots and dashes.
  const bucket = matching(env, 'ARCHIVE_S3_BUCKET', '', /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name (3-63 of a-z, 0-9, . and -)');
  const prefix = matching(
    env,
    'ARCHIVE_S3_PREFIX',
    '',
    /^$|^(?!(.*\/)?\.{1,2}\/)[A-Za-z0-9!_.*'()-]+(\/[A-Za-z0-9!_.*'()-]+)*\/$/,
    'empty, or key segments (not . or ..) ending in / (e.g. opsflow/archive/)',
  );
  return {
    archiveSink,
    archiveS3: {
      endpoint: storeEndpointOf(parsed),
      bucket,
      prefix,
      region: matching(env, 'ARCHIVE_S3_REGION', 'us-east-1', /^[a-z0-9-]{1,64}$/, 'a region name (e.g. eu-west-1)'),
      forcePathStyle: oneOf(env, 'ARCHIVE_S3_PATH_STYLE', 'true', ['true', 'false'] as const) === 'true',
    },
  };
}

export function loadConfig(env: Env = process.env): Config {
  const nodeEnv = text(env, 'NODE_ENV', '');
  const production = !DEVELOPMENT_ENVS.includes(nodeEnv);
  const apiPort = port(env, 'API_PORT', 8080);
  const edgeDir = optional(env, 'EDGE_DIR');
  const apiListenPort = port(env, 'API_LISTEN_PORT', edgeDir ? apiPort + 1 : apiPort);
  const temporalUiUrl = url(env, 'TEMPORAL_UI_URL', 'http://127.0.0.1:8233', ['http:', 'https:']) as string;
  return {
    nodeEnv,
    production,
    apiHost: text(env, 'API_HOST', '127.0.0.1'),
    apiPort,
    apiListenPort,
    edgeDir,
    edgeAdminUrl: url(env, 'EDGE_ADMIN_URL', null, ['http:'])?.replace(/\/+$/, '') ?? null,
    edgeApiAddress: hostAndPort(env, 'EDGE_API_ADDRESS', `127.0.0.1:${apiListenPort}`),
    edgeConnectTimeoutMs: integer(env, 'EDGE_CONNECT_TIMEOUT_MS', 1000, 10, 60000),
    edgeIdleTimeoutSeconds: integer(env, 'EDGE_IDLE_TIMEOUT_SECONDS', 300, 1, 86400),
    edgeTlsPort: port(env, 'EDGE_TLS_PORT', apiPort + 3),
    edgeTlsPublicPort: port(env, 'EDGE_TLS_PUBLIC_PORT', port(env, 'EDGE_TLS_PORT', apiPort + 3)),
    acme: acmeSettings(env, production),
    apiInternalUrl: (url(env, 'API_INTERNAL_URL', `http://127.0.0.1:${apiListenPort}`, ['http:', 'https:']) as string).replace(/\/+$/, ''),
    publicUrl: (url(env, 'PUBLIC_URL', `http://localhost:${apiPort}`, ['http:', 'https:']) as string).replace(/\/+$/, ''),
    databaseUrl: url(env, 'DATABASE_URL', 'postgres://opsflow:opsflow@127.0.0.1:54329/opsflow', ['postgres:', 'postgresql:']) as string,
    temporalAddress: text(env, 'TEMPORAL_ADDRESS', '127.0.0.1:7233'),
    temporalServer: oneOf(env, 'TEMPORAL_SERVER', 'dev', ['dev', 'cluster'] as const),
    temporalNodes: temporalNodes(env),
    temporalIdentityDir: optional(env, 'TEMPORAL_IDENTITY_DIR'),
    temporalAdminIdentityDir: optional(env, 'TEMPORAL_ADMIN_IDENTITY_DIR'),
    temporalTlsCaFile: optional(env, 'TEMPORAL_TLS_CA_FILE'),
    temporalTlsDir: optional(env, 'TEMPORAL_TLS_DIR'),
    temporalPublicDir: optional(env, 'TEMPORAL_PUBLIC_DIR'),
    temporalNamespace: text(env, 'TEMPORAL_NAMESPACE', 'default'),
    temporalUiUrl: temporalUiUrl.replace(/\/+$/, ''),
    jwtSecret: secret(env, 'JWT_SECRET', production, 16),
    ...jwksSettings(env, production),
    internalToken: secret(env, 'INTERNAL_TOKEN', production, 16),
    secretsKey: secret(env, 'SECRETS_KEY', production, 16),
    temporalPayloadKeys: payloadKeys(env, production),
    assetQuotaBytesPerSite: integer(env, 'ASSET_QUOTA_BYTES_PER_SITE', 10 * 1024 ** 3, 0, Number.MAX_SAFE_INTEGER),
    sendRateLimit: integer(env, 'SEND_RATE_LIMIT', 10, 1, 1_000_000),
    sendRateWindowSeconds: integer(env, 'SEND_RATE_WINDOW_SECONDS', 60, 1, 86400),
    signInRateLimit: integer(env, 'SIGN_IN_RATE_LIMIT', 30, 1, 1_000_000),
    signInRateWindowSeconds: integer(env, 'SIGN_IN_RATE_WINDOW_SECONDS', 60, 1, 86400),
    secretsKeyPrevious: optional(env, 'SECRETS_KEY_PREVIOUS'),
    dataDir: text(env, 'DATA_DIR', '.data'),
    dockerHost: optional(env, 'DOCKER_HOST'),
    ...deployDriverSettings(env),
    deployBaseImage: text(env, 'DEPLOY_BASE_IMAGE', 'eclipse-temurin:17-jre'),
    deployBaseImageBuild: baseImageBuild(env),
    deployNetwork: dockerName(env, 'DEPLOY_NETWORK', 'opsflow'),
    deployAttachContainers: attachList(env, 'DEPLOY_ATTACH_CONTAINERS'),
    deployScope: dockerName(env, 'DEPLOY_SCOPE', 'opsflow'),
    deployHostBind: text(env, 'DEPLOY_HOST_BIND', '127.0.0.1'),
    deployMemoryMb: integer(env, 'DEPLOY_MEMORY_MB', 512, 64, 65536),
    deployPidsLimit: integer(env, 'DEPLOY_PIDS_LIMIT', 512, 16, 65536),
    deployCpus: decimal(env, 'DEPLOY_CPUS', 1, 0.01, 256),
    deployLogMaxSize: matching(env, 'DEPLOY_LOG_MAX_SIZE', '10m', /^[1-9][0-9]*[kmg]$/, 'a size such as 10m'),
    deployLogMaxFiles: integer(env, 'DEPLOY_LOG_MAX_FILES', 3, 1, 100),
    deployAllowLowHostPorts: flag(env, 'DEPLOY_ALLOW_LOW_HOST_PORTS'),
    deployHealthTimeoutSeconds: integer(env, 'DEPLOY_HEALTH_TIMEOUT_SECONDS', 120, 1, 3600),
    deployDrainSeconds: integer(env, 'DEPLOY_DRAIN_SECONDS', 3, 1, 600),
    deployReconcileSeconds: integer(env, 'DEPLOY_RECONCILE_SECONDS', 30, 5, 86400),
    maxJarBytes: integer(env, 'MAX_JAR_BYTES', 512 * 1024 * 1024, 1024, 2 * 1024 * 1024 * 1024),
    smtpCapturePort: port(env, 'SMTP_CAPTURE_PORT', 1025),
    mailCaptureUiPort: port(env, 'MAIL_CAPTURE_UI_PORT', 8025),
    mailFrom: text(env, 'MAIL_FROM', 'Opsflow <no-reply@opsflow.local>'),
    ...bounceSettings(env),
    outboundAllow: outboundAllowances(env),
    archiveCron: cron(env, 'ARCHIVE_CRON', '0 2 * * *'),
    revisionRetentionCron: cron(env, 'REVISION_RETENTION_CRON', '30 2 * * *'),
    archiveFormat: oneOf(env, 'ARCHIVE_FORMAT', 'csv', ARCHIVE_FORMAT_NAMES),
    ...archiveSinkSettings(env, production),
    logLevel: text(env, 'LOG_LEVEL', 'info'),
    workflowBundlePath: optional(env, 'WORKFLOW_BUNDLE_PATH'),
  };
}
