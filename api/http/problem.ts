import { Context, Middleware } from 'koa';
import { ErrorCatalogue, ErrorCode, FieldIssue, PlatformError } from '../../lib/errors';
import { temporalError } from '../../temporal-config/temporal-errors';
import { Logger } from '../../lib/logger';
import { SecretTampered } from '../../lib/secrets';
import { databaseProblemOf } from '../../data/db-errors';

/** Codes for errors thrown by Koa and its body parser (http-errors), which carry only a status. */
const CODES_BY_STATUS: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  503: 'SERVICE_UNAVAILABLE',
};

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldIssue[];
}

/** A problem+json body for a code of the catalogue: its status and title, with this detail. */
export function problemBody(code: ErrorCode, detail: string, errors?: FieldIssue[]): Problem {
  const { status, title } = ErrorCatalogue[code];
  const body: Problem = { type: `https://opsflow.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`, title, status, detail, code };
  if (errors) body.errors = errors;
  return body;
}

export function sendProblem(ctx: Context, args: { code: ErrorCode; detail: string; errors?: FieldIssue[] }): void {
  const body = problemBody(args.code, args.detail, args.errors);
  ctx.status = body.status;
  ctx.type = 'application/problem+json';
  ctx.body = body;
}

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  message?: string;
  type?: string;
}

/**
 * The one translation of any failure into the catalogue: the platform's own errors keep their code; a
 * Temporal client error is translated once (temporal-config/temporal-errors), a database failure once
 * (data/db-errors); Koa's and the body parser's errors get the code of their status; anything else is a
 * 500 with a generic detail.
 */
export function problemOf(error: unknown): { code: ErrorCode; detail: string; errors?: FieldIssue[]; retryAfterSeconds?: number } {
  const known = error instanceof PlatformError ? error : temporalError(error);
  if (known) return { code: known.code, detail: known.message, errors: known.errors, retryAfterSeconds: known.retryAfterSeconds };
  if (error instanceof SecretTampered) return { code: 'SECRET_INTEGRITY_FAILED', detail: error.message };
  const fromDatabase = databaseProblemOf(error);
  if (fromDatabase) return fromDatabase;
  const httpError = error as HttpLikeError;
  const status = httpError?.status ?? httpError?.statusCode;
  // The router answers a method it does not know (TRACE, say) 501: for a client that is 405.
  if (status === 501) return { code: 'METHOD_NOT_ALLOWED', detail: 'This method is not allowed here.' };
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code = CODES_BY_STATUS[status] ?? 'BAD_REQUEST';
    // Body-parser and Koa errors: their messages are written for clients (`expose`), others stay generic.
    const detail = httpError.expose && httpError.message ? httpError.message : ErrorCatalogue[code].title;
    return { code, detail };
  }
  return { code: 'INTERNAL_ERROR', detail: 'An unexpected error occurred; it has been logged.' };
}

/**
 * Renders every failure as application/problem+json with a stable code. Unknown errors become a 500 with a
 * generic detail: no stack trace, SQL text or secret ever reaches a client.
 */
export function problemMiddleware(options: { onUndeclared?: (answer: { route: string; code: ErrorCode }) => void } = {}): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        sendProblem(ctx, { code: 'NOT_FOUND', detail: `No route for ${ctx.method} ${ctx.path}.` });
      }
    } catch (error) {
      const problem = problemOf(error);
      const logger = ctx.state.logger as Logger | undefined;
      if (ErrorCatalogue[problem.code].status >= 500) logger?.error({ err: error, requestId: ctx.state.requestId }, 'request failed');
      // The database refused what a request carried or lost a race: the caller is told 4xx, and since the
      // schemas check every value first, it may as well be the platform's own bug; the operator sees it.
      else if (problem.code === 'CONSTRAINT_VIOLATED' || problem.code === 'CONCURRENT_UPDATE')
        logger?.warn({ err: error, requestId: ctx.state.requestId }, 'the database refused a request');
      sendProblem(ctx, problem);
      if (problem.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(problem.retryAfterSeconds));
      const route = ctx.state.route as { method: string; path: string; declared: Set<ErrorCode> } | undefined;
      if (route && !route.declared.has(problem.code)) options.onUndeclared?.({ route: `${route.method.toUpperCase()} ${route.path}`, code: problem.code });
    }
  };
}
