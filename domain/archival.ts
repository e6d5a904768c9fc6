/** The archival vocabulary every layer shares: log types, the archive folder, archive file names. Imports only its own layer. */
import { check, firstProblem, Problem } from './workflow-input';
import { Refusal } from './refusal';
export const LOG_TYPES = ['SCHEDULER_JOB_LOG', 'EMAIL_LOG', 'INTEGRATION_LOG'] as const;
export type LogType = (typeof LOG_TYPES)[number];

/** What an archive file is written in: RFC 4180 CSV, or Parquet (zstd) holding each column as PostgreSQL's CSV text. */
export const ARCHIVE_FORMATS = ['csv', 'parquet'] as const;
export type ArchiveFormat = (typeof ARCHIVE_FORMATS)[number];

/** Archive files: `{log_type}_{cutoff as YYYYMMDDTHHmmssZ}_{part, 3 digits}.{csv|parquet}`. */
export function archiveFileName(logType: LogType, cutoff: Date, partNo: number, format: ArchiveFormat = 'csv'): string {
  const stamp = cutoff
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
  return `${logType.toLowerCase()}_${stamp}_${String(partNo).padStart(3, '0')}.${format}`;
}

/**
 * A month archived whole: `{log_type}_month_{YYYYMM}_{archive id, first 8}_{part, 3 digits}.{csv|parquet}`, its
 * month in UTC. The archive's id keeps apart the files of a month archived again (its rows restored, then past
 * retention).
 */
export function archivePartitionFileName(logType: LogType, monthStart: Date, archiveId: string, partNo: number, format: ArchiveFormat = 'csv'): string {
  const month = monthStart.toISOString().slice(0, 7).replace('-', '');
  return `${logType.toLowerCase()}_month_${month}_${archiveId.slice(0, 8)}_${String(partNo).padStart(3, '0')}.${format}`;
}

/** The content type an archive file is stored and served with. */
export const ARCHIVE_CONTENT_TYPES: Record<ArchiveFormat, string> = { csv: 'text/csv', parquet: 'application/vnd.apache.parquet' };

/** An archive file's content type, by its name's extension (`.parquet`, else CSV). */
export const archiveContentTypeOf = (fileName: string): string => ARCHIVE_CONTENT_TYPES[fileName.endsWith('.parquet') ? 'parquet' : 'csv'];

const DAY_MS = 24 * 60 * 60 * 1000;

/** The instant before which a site's rows are past its retention, for a run started at `runStart` (epoch ms). */
export function retentionCutoff(runStart: number, retentionDays: number): Date {
  return new Date(runStart - retentionDays * DAY_MS);
}

export const ARCHIVE_FOLDER = '/archive';

/** `/archive` and everything under it belong to the archive sink. */
export function isArchiveFolder(folder: unknown): boolean {
  return typeof folder === 'string' && (folder === ARCHIVE_FOLDER || folder.startsWith(`${ARCHIVE_FOLDER}/`));
}

/**
 * Why a write to a file is refused, or null when it is allowed. Archive files are records: once a run pruned
 * their rows, a file is the only copy of them. Nobody edits, renames, restores, re-publishes, archives or
 * moves one, nor moves or uploads a file into `/archive`.
 */
export function archiveWriteProblem(current: { folder?: unknown } | null, next?: { folder?: unknown }): string | null {
  if (current && isArchiveFolder(current.folder)) return `Files in ${ARCHIVE_FOLDER} are records of archive runs: they cannot be changed or moved.`;
  if (next && isArchiveFolder(next.folder)) return `${ARCHIVE_FOLDER} belongs to the archive runs: no file can be put there by hand.`;
  return null;
}

export const MAX_ROWS_PER_PART = 1_000_000;

/** How many sites one archive run works on at once, at most. */
export const MAX_SITE_CONCURRENCY = 16;
/** A heartbeat timeout as the archive run takes it: `3 seconds`, `10 s`, `1 minute`, `500 ms`. */
const HEARTBEAT_TIMEOUT = '^\\d{1,5} ?(ms|milliseconds?|s|seconds?|m|minutes?|h|hours?)$';

/** Why an archive run's input is refused, or null. */
export function archiveRunInputProblem(input: unknown): Problem {
  return firstProblem(input, (given) => [
    check.oneOf('logType', given.logType, LOG_TYPES),
    check.optional(given.siteId, () => check.siteId('siteId', given.siteId)),
    check.optional(given.dryRun, () => check.boolean('dryRun', given.dryRun)),
    check.optional(given.heartbeatTimeout, () => check.pattern('heartbeatTimeout', given.heartbeatTimeout, HEARTBEAT_TIMEOUT)),
    check.optional(given.maxRowsPerPart, () => check.integer('maxRowsPerPart', given.maxRowsPerPart, 1, MAX_ROWS_PER_PART)),
    check.optional(given.siteConcurrency, () => check.integer('siteConcurrency', given.siteConcurrency, 1, MAX_SITE_CONCURRENCY)),
  ]);
}

/** Why a scheduled archive's input is refused, or null. */
export const scheduledArchiveInputProblem = (input: unknown): Problem => firstProblem(input, (given) => [check.oneOf('logType', given.logType, LOG_TYPES)]);

/** Why a restore's input is refused, or null. */
export const archiveRestoreInputProblem = (input: unknown): Problem =>
  firstProblem(input, (given) => [check.uuid('assetId', given.assetId), check.text('requestedBy', given.requestedBy, 256)]);

const invalid = (why: string): Refusal => ({ code: 'VALIDATION_FAILED', why });

/** An S3 store's endpoint is an http or https URL with no user info, query or fragment: the keys are set apart. */
export function storeEndpointRefusal(endpoint: string): Refusal | null {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return invalid(`The endpoint ${endpoint.slice(0, 200)} is not a URL.`);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.username || url.password || url.search || url.hash)
    return invalid('An endpoint is an http or https URL with no user info, query or fragment.');
  return null;
}

/** A store as stored, and what a write asks of it. */
export interface StoreWrite {
  store: { endpoint: string; bucket: string; region: string; pathStyle: boolean; accessKeyId: string | null };
  asked: { region?: string; pathStyle?: boolean };
  keys?: { accessKeyId: string; secretAccessKey?: string };
  keysRequired: boolean;
  /** The platform's own configuration (ARCHIVE_S3_*) may change a store's region and path style. */
  fromConfig: boolean;
}

/** Whether a write names a region or path style other than the store's. */
export const storeSettingsDiffer = ({ store, asked }: Pick<StoreWrite, 'store' | 'asked'>): boolean =>
  (asked.region !== undefined && store.region !== asked.region) || (asked.pathStyle !== undefined && store.pathStyle !== asked.pathStyle);

/**
 * A store's region and path style are set when it is made: a policy that names a known store with others is
 * refused, so that no one re-points a store's keys. A new key id needs its secret, and a store that must
 * have keys needs them.
 */
export function storeWriteRefusal(write: StoreWrite): Refusal | null {
  const { store, keys } = write;
  if (storeSettingsDiffer(write) && !write.fromConfig)
    return invalid(`The store ${store.bucket} at ${store.endpoint} exists with region ${store.region} and path style ${store.pathStyle}: name it with those.`);
  if (!keys && write.keysRequired && !store.accessKeyId)
    return invalid(`The store ${store.bucket} at ${store.endpoint} has no keys yet: give accessKeyId and secretAccessKey.`);
  if (keys && keys.secretAccessKey === undefined && store.accessKeyId !== keys.accessKeyId)
    return invalid('secretAccessKey is required with a new accessKeyId: a key id and its secret go together.');
  return null;
}
