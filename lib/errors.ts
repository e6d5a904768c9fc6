/**
 * The platform's error vocabulary. The same code is the problem+json `code` at the API edge and the
 * `ApplicationFailure` type inside activities, so a failure keeps its name from worker to client.
 * No Node built-ins here: workflows import this file.
 */
const entry = (status: number, title: string) => ({ status, title });

/**
 * Every code the platform answers or fails with, once, with its HTTP status and title. Closed: ErrorCode
 * admits only these keys, so a new code is a line here first.
 */
export const ErrorCatalogue = {
  // Generic
  VALIDATION_FAILED: entry(400, 'The request is not valid'),
  BAD_REQUEST: entry(400, 'Bad request'),
  INVALID_CURSOR: entry(400, 'Unknown cursor'),
  UNAUTHENTICATED: entry(401, 'Unauthenticated'),
  FORBIDDEN: entry(403, 'Forbidden'),
  NOT_FOUND: entry(404, 'Not found'),
  METHOD_NOT_ALLOWED: entry(405, 'Method not allowed'),
  CONFLICT: entry(409, 'Conflict'),
  WORKFLOW_ALREADY_RUNNING: entry(409, 'A run is already in progress'),
  PAYLOAD_TOO_LARGE: entry(413, 'Payload too large'),
  QUOTA_EXCEEDED: entry(413, 'Quota exceeded'),
  UNSUPPORTED_MEDIA_TYPE: entry(415, 'Unsupported media type'),
  RATE_LIMITED: entry(429, 'Too many requests'),
  IDEMPOTENCY_KEY_IN_USE: entry(409, 'A request with this Idempotency-Key is in flight'),
  IDEMPOTENCY_KEY_REUSED: entry(422, 'This Idempotency-Key named another request'),
  INTERNAL_ERROR: entry(500, 'Internal error'),
  BAD_GATEWAY: entry(502, 'Bad gateway'),
  SERVICE_UNAVAILABLE: entry(503, 'Service unavailable'),
  NOT_READY: entry(503, 'Not ready'),
  DATABASE_UNAVAILABLE: entry(503, 'The database is unavailable'),
  DATABASE_BUSY: entry(503, 'The database is busy'),
  CONCURRENT_UPDATE: entry(409, 'Changed concurrently'),
  FAIRNESS_WEIGHTS_FULL: entry(409, 'Too many weights of their own'),
  CONSTRAINT_VIOLATED: entry(400, 'A value breaks a rule of the stored data'),
  TEMPORAL_UNAVAILABLE: entry(503, 'Temporal is unavailable'),
  DOCKER_UNAVAILABLE: entry(503, 'The Docker engine is unavailable'),
  ARCHIVE_SINK_FULL: entry(507, 'The archive storage is full'),
  ARCHIVE_SINK_UNAVAILABLE: entry(503, 'The archive storage is unavailable'),
  ARCHIVE_SINK_UNVERIFIED: entry(502, 'The archive storage did not give back the bytes it was sent'),
  BASE_IMAGE_UNAVAILABLE: entry(503, 'The JAR base image cannot be had'),
  // Directory
  USER_EMAIL_TAKEN: entry(409, 'Email taken'),
  IDENTITY_PROVIDER_UNAVAILABLE: entry(503, 'The identity provider is unavailable'),
  // Deployments
  INVALID_JAR: entry(400, 'Invalid JAR'),
  UNSAFE_JAR: entry(400, 'Unsafe JAR'),
  MISSING_APPLICATION_NAME: entry(400, 'Missing application name'),
  INVALID_INSTANCES: entry(400, 'Invalid instance count'),
  SERVICE_NOT_FOUND: entry(404, 'Service not found'),
  DEPLOYMENT_NOT_FOUND: entry(404, 'Deployment not found'),
  JAR_TOO_LARGE: entry(413, 'JAR too large'),
  SERVICE_EXISTS: entry(409, 'Service exists'),
  SLUG_TAKEN: entry(409, 'Slug taken'),
  SLUG_RESERVED: entry(409, 'Slug reserved'),
  DEPLOYMENT_IN_PROGRESS: entry(409, 'Deployment in progress'),
  SERVICE_NOT_DYNAMIC: entry(409, 'Core service'),
  NO_PREVIOUS_VERSION: entry(409, 'No previous version'),
  NO_ROLLOUT_IN_PROGRESS: entry(409, 'No rollout in progress'),
  LIMITS_NOT_APPLIED: entry(409, 'The engine refused the limits'),
  DOMAIN_INVALID: entry(400, 'Invalid domain'),
  DOMAIN_TAKEN: entry(409, 'Domain taken'),
  DOMAIN_NOT_FOUND: entry(404, 'The service has no such hostname'),
  CERTIFICATE_INVALID: entry(400, 'Invalid certificate'),
  ACME_CHALLENGE_NOT_FOUND: entry(404, 'No such ACME challenge'),
  // Certificate run failures (the deployments worker)
  ACME_NOT_CONFIGURED: entry(500, 'No ACME server is configured'),
  ACME_CHALLENGE_REFUSED: entry(500, 'The ACME server refused the challenge'),
  CERTIFICATE_NOT_WANTED: entry(500, 'No service names the hostname'),
  // Deploy run failures (workers; the types of their ApplicationFailures)
  DEPLOY_FAILED: entry(500, 'Deploy failed'),
  INSTANCE_UNHEALTHY: entry(500, 'Instance unhealthy'),
  ROLLED_BACK_BY_SWARM: entry(500, 'The swarm rolled the update back'),
  CONTAINER_START_FAILED: entry(500, 'Container did not start'),
  IMAGE_BUILD_FAILED: entry(500, 'Image build failed'),
  IMAGE_NOT_FOUND: entry(500, 'Image not found'),
  JAR_MISSING: entry(500, 'JAR missing'),
  EDGE_NOT_ROUTING: entry(500, 'The edge does not route to the new instances'),
  SERVICE_NETWORKS_FULL: entry(500, "No address block is left for a service's network"),
  EDGE_STATS_UNAVAILABLE: entry(500, "The edge's statistics cannot be read"),
  // Versioning and approvals
  REVISION_NOT_FOUND: entry(404, 'Revision not found'),
  APPROVAL_PENDING: entry(409, 'Approval pending'),
  ALREADY_DECIDED: entry(409, 'Already decided'),
  SELF_APPROVAL_FORBIDDEN: entry(403, 'Self-approval forbidden'),
  APPROVER_ALREADY_DECIDED: entry(403, 'Approver already decided'),
  DECISION_NOT_RECORDED: entry(409, 'Decision not recorded'),
  APPROVAL_MISMATCH: entry(409, 'Not what the approval decided'),
  CANCEL_NOT_RECORDED: entry(409, 'Cancel not recorded'),
  SCHEDULE_PASSED: entry(409, 'The scheduled time has come'),
  CHANGE_SCHEDULED: entry(409, 'A change is scheduled'),
  APPROVAL_POLICY_EXISTS: entry(409, 'Approval policy exists'),
  COMPONENT_SLUG_TAKEN: entry(409, 'Slug taken'),
  COMPONENT_NOT_PUBLISHED: entry(409, 'Component not published'),
  WORKFLOW_DEFINITION_NOT_PUBLISHED: entry(409, 'Workflow definition not published'),
  RELEASE_LOCKED: entry(409, 'The release is locked'),
  RELEASE_FULL: entry(409, 'The release is full'),
  RELEASE_FAILED: entry(409, 'The release published nothing'),
  // Assets and archives: files in /archive are records
  ASSET_EXISTS: entry(409, 'Asset exists'),
  CHECKSUM_MISMATCH: entry(400, 'Checksum mismatch'),
  ARCHIVE_PART_NOT_STAGED: entry(404, 'The archive part has no staged file here'),
  ARCHIVE_READ_ONLY: entry(403, 'Archive files are read-only'),
  ARCHIVE_POLICY_EXISTS: entry(409, 'Archive policy exists'),
  ARCHIVE_RUN_IN_PROGRESS: entry(409, 'Archive run in progress'),
  ARCHIVE_RUN_NOT_FOUND: entry(404, 'Archive run not found'),
  NOT_AN_ARCHIVE_FILE: entry(409, 'Not an archive file'),
  ARCHIVE_RESTORE_NOT_FOUND: entry(404, 'Archive restore not found'),
  ARCHIVE_HELD: entry(409, 'Archive file under legal hold'),
  ARCHIVE_HOLD_NOT_FOUND: entry(404, 'Legal hold not found'),
  ARCHIVE_HOLD_RELEASED: entry(409, 'Legal hold already released'),
  // Archive run failures (workers)
  ARCHIVE_SITES_FAILED: entry(500, 'Archive failed for some sites'),
  INVALID_PART_SIZE: entry(500, 'Invalid part size'),
  PART_CHANGED: entry(500, 'Archive part changed'),
  PART_NOT_CONFIRMED: entry(500, 'Archive part not confirmed'),
  PARTITION_MISSING: entry(500, 'Log partition missing before its detach'),
  UPLOAD_NOT_CONFIRMED: entry(502, 'Upload not confirmed'),
  UPLOAD_REFUSED: entry(502, 'Upload refused'),
  ARCHIVE_FILE_CORRUPT: entry(500, 'Archive file does not match its manifest'),
  // Messaging
  TEMPLATE_NOT_PUBLISHED: entry(409, 'Template not published'),
  NO_ACTIVE_CONFIG: entry(409, 'No active configuration'),
  UNSUBSCRIBE_LINK_INVALID: entry(400, 'Not a valid unsubscribe link'),
  CONFIG_NAME_TAKEN: entry(409, 'Configuration name taken'),
  LOG_NOT_FAILED: entry(409, 'Log not failed'),
  OUTBOUND_NOT_ALLOWED: entry(400, 'Outbound address not allowed'),
  PEER_FAULT: entry(502, 'The peer answered a fault'),
  SECRET_INTEGRITY_FAILED: entry(500, 'Secret integrity check failed'),
  // Delivery failures (workers)
  PERMANENT_FAILURE: entry(502, 'Delivery failed'),
  TEMPORARY_FAILURE: entry(503, 'Delivery failed for now'),
} as const;

export type ErrorCode = keyof typeof ErrorCatalogue;

export const isErrorCode = (value: unknown): value is ErrorCode => typeof value === 'string' && Object.prototype.hasOwnProperty.call(ErrorCatalogue, value);

export interface FieldIssue {
  path: string;
  message: string;
}

/**
 * A refusal or failure with a stable code of the catalogue. Any layer throws it (data/ included): it carries
 * no HTTP status of its own; the API edge answers it as problem+json with the catalogue's status and title.
 */
export class PlatformError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly errors?: FieldIssue[],
    /** For RATE_LIMITED: when the caller may try again (the answer's Retry-After). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'PlatformError';
  }

  get status(): number {
    return ErrorCatalogue[this.code].status;
  }
}

export const badRequest = (code: ErrorCode, detail: string, errors?: FieldIssue[]) => new PlatformError(code, detail, errors);
export const unauthenticated = (detail = 'A valid bearer token is required.') => new PlatformError('UNAUTHENTICATED', detail);
export const forbidden = (detail = 'You are not allowed to do this.', code: ErrorCode = 'FORBIDDEN') => new PlatformError(code, detail);
export const notFound = (detail = 'Not found.', code: ErrorCode = 'NOT_FOUND') => new PlatformError(code, detail);
export const conflict = (code: ErrorCode, detail: string, errors?: FieldIssue[]) => new PlatformError(code, detail, errors);
export const unavailable = (code: ErrorCode, detail: string) => new PlatformError(code, detail);

/**
 * The error of a refusal a rule in domain/ decided (domain/refusal.ts). lib/ cannot import domain/, so the
 * refusal comes in by its shape, and its code is checked against the catalogue here.
 */
export function refusedWith(refusal: { code: string; why: string; fields?: FieldIssue[] }): PlatformError {
  if (!isErrorCode(refusal.code)) throw new Error(`A rule refused with ${refusal.code}, which is not in the error catalogue.`);
  return new PlatformError(refusal.code, refusal.why, refusal.fields);
}

/**
 * The error an activity's or workflow's failure stands for: a failure whose type is a code of this catalogue
 * keeps that code; anything else is an internal error with a generic detail.
 */
export function problemOfFailure(failure: { type?: string | null; message: string }): PlatformError {
  if (isErrorCode(failure.type)) return new PlatformError(failure.type, failure.message);
  return new PlatformError('INTERNAL_ERROR', 'The workflow failed; the failure is in its history.');
}
