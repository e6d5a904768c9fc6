/**
 * The platform's error vocabulary. The same code is the problem+json `code` at the API edge and the
 * `ApplicationFailure` type inside activities, so a failure keeps its name from worker to client.
 * No Node built-ins here: workflows import this file.
 */
export const ErrorCodes = {
  VALIDATION_FAILED: 400,
  BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  WORKFLOW_ALREADY_RUNNING: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INTERNAL_ERROR: 500,
  DATABASE_UNAVAILABLE: 503,
  TEMPORAL_UNAVAILABLE: 503,
  DOCKER_UNAVAILABLE: 503,
  // Deployments (deployment.md)
  INVALID_JAR: 400,
  UNSAFE_JAR: 400,
  MISSING_APPLICATION_NAME: 400,
  INVALID_INSTANCES: 400,
  JAR_TOO_LARGE: 413,
  SERVICE_EXISTS: 409,
  SLUG_TAKEN: 409,
  SLUG_RESERVED: 409,
  DEPLOYMENT_IN_PROGRESS: 409,
  SERVICE_NOT_DYNAMIC: 409,
  NO_PREVIOUS_VERSION: 409,
  SERVICE_UNAVAILABLE: 503,
  // Versioning and approvals (versioning.md)
  REVISION_NOT_FOUND: 404,
  APPROVAL_PENDING: 409,
  ALREADY_DECIDED: 409,
  SELF_APPROVAL_FORBIDDEN: 403,
  APPROVER_ALREADY_DECIDED: 403,
  DECISION_NOT_RECORDED: 409,
  APPROVAL_POLICY_EXISTS: 409,
  COMPONENT_SLUG_TAKEN: 409,
  WORKFLOW_DEFINITION_NOT_PUBLISHED: 409,
  // Archives (archival.md): files in /archive are records
  ARCHIVE_READ_ONLY: 403,
  // Messaging (messaging.md)
  TEMPLATE_NOT_PUBLISHED: 409,
  NO_ACTIVE_CONFIG: 409,
  CONFIG_NAME_TAKEN: 409,
  LOG_NOT_FAILED: 409,
  OUTBOUND_NOT_ALLOWED: 400,
  SECRET_INTEGRITY_FAILED: 500,
} as const;

export type ErrorCode = keyof typeof ErrorCodes | (string & {});

export interface FieldIssue {
  path: string;
  message: string;
}

/** An error the API turns into a problem+json answer with a stable code. */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly errors?: FieldIssue[],
  ) {
    super(message);
    this.name = 'ProblemError';
  }
}

export const badRequest = (code: ErrorCode, detail: string, errors?: FieldIssue[]) =>
  new ProblemError(400, code, detail, errors);
export const unauthenticated = (detail = 'A valid bearer token is required.') =>
  new ProblemError(401, 'UNAUTHENTICATED', detail);
export const forbidden = (detail = 'You are not allowed to do this.', code: ErrorCode = 'FORBIDDEN') =>
  new ProblemError(403, code, detail);
export const notFound = (detail = 'Not found.', code: ErrorCode = 'NOT_FOUND') => new ProblemError(404, code, detail);
export const conflict = (code: ErrorCode, detail: string) => new ProblemError(409, code, detail);
export const unavailable = (code: ErrorCode, detail: string) => new ProblemError(503, code, detail);

/**
 * The problem an activity's or workflow's failure stands for: a failure whose type is a code of this
 * catalogue keeps that code and its status; anything else is an internal error with a generic detail.
 */
export function problemOfFailure(failure: { type?: string | null; message: string }): ProblemError {
  const code = failure.type ?? '';
  if (code in ErrorCodes) return new ProblemError(ErrorCodes[code as keyof typeof ErrorCodes], code, failure.message);
  return new ProblemError(500, 'INTERNAL_ERROR', 'The workflow failed; the failure is in its history.');
}
