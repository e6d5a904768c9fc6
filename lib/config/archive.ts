import { ConfigError, cron, Env, matching, oneOf, url } from './read';

/** The formats an archive file can be written in (domain/archival names them for every layer). */
const ARCHIVE_FORMAT_NAMES = ['csv', 'parquet'] as const;

/** When logs are archived, in what format, and where the files go. */
export interface ArchiveConfig {
  cron: string;
  /** The format of archive files for a policy that names none (ARCHIVE_FORMAT). */
  format: (typeof ARCHIVE_FORMAT_NAMES)[number];
  /**
   * Where new archive files go (ARCHIVE_SINK): `file`, the API's own asset folder, or `s3`, the bucket of
   * `archive.s3`. Files already stored stay readable where they are, whichever sink is set later.
   */
  sink: 'file' | 's3';
  /** The S3-compatible store (ARCHIVE_S3_*); its credentials are set by an ADMIN and kept encrypted in the database. */
  s3: ArchiveS3Settings | null;
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
function archiveSinkSettings(env: Env, production: boolean): Pick<ArchiveConfig, 'sink' | 's3'> {
  const sink = oneOf(env, 'ARCHIVE_SINK', 'file', ['file', 's3'] as const);
  const endpoint = url(env, 'ARCHIVE_S3_ENDPOINT', null, production ? ['https:'] : ['http:', 'https:']);
  if (endpoint === null) {
    if (sink === 's3') throw new ConfigError('ARCHIVE_S3_ENDPOINT', "is required when ARCHIVE_SINK is s3 (the store's URL)");
    return { sink, s3: null };
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
    sink,
    s3: {
      endpoint: storeEndpointOf(parsed),
      bucket,
      prefix,
      region: matching(env, 'ARCHIVE_S3_REGION', 'us-east-1', /^[a-z0-9-]{1,64}$/, 'a region name (e.g. eu-west-1)'),
      forcePathStyle: oneOf(env, 'ARCHIVE_S3_PATH_STYLE', 'true', ['true', 'false'] as const) === 'true',
    },
  };
}

export function archiveConfig(env: Env, production: boolean): ArchiveConfig {
  return {
    cron: cron(env, 'ARCHIVE_CRON', '0 2 * * *'),
    format: oneOf(env, 'ARCHIVE_FORMAT', 'csv', ARCHIVE_FORMAT_NAMES),
    ...archiveSinkSettings(env, production),
  };
}

/** The content jobs' schedules. */
export interface ContentConfig {
  /** When the revision retention job runs (UTC, five fields). */
  revisionRetentionCron: string;
}

export function contentConfig(env: Env): ContentConfig {
  return { revisionRetentionCron: cron(env, 'REVISION_RETENTION_CRON', '30 2 * * *') };
}
