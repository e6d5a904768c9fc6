import { Context, Middleware } from 'koa';
import { FieldIssue, ProblemError } from '../../lib/errors';
import { Logger } from '../../lib/logger';
import { SecretTampered } from '../../lib/secrets';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Codes for errors thrown by Koa and its body parser (http-errors), which carry only a status. */
const CODES_BY_STATUS: Record<number, string> = {
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

export function sendProblem(ctx: Context, args: { status: number; code: string; detail: string; errors?: FieldIssue[] }): void {
  const body: Problem = {
    type: `https://opsflow.dev/problems/${args.code.toLowerCase().replace(/_/g, '-')}`,
    title: TITLES[args.status] ?? 'Error',
    status: args.status,
    detail: args.detail,
    code: args.code,
  };
  if (args.errors) body.errors = args.errors;
  ctx.status = args.status;
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

function fromUnknown(error: unknown): { status: number; code: string; detail: string; errors?: FieldIssue[] } {
  if (error instanceof ProblemError) {
    return { status: error.status, code: String(error.code), detail: error.message, errors: error.errors };
  }
  if (error instanceof SecretTampered) return { status: 500, code: 'SECRET_INTEGRITY_FAILED', detail: error.message };
  const httpError = error as HttpLikeError;
  const status = httpError?.status ?? httpError?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Body-parser and Koa errors: their messages are written for clients (`expose`), others stay generic.
    const detail = httpError.expose && httpError.message ? httpError.message : TITLES[status] ?? 'Request refused.';
    return { status, code: CODES_BY_STATUS[status] ?? 'BAD_REQUEST', detail };
  }
  return { status: 500, code: 'INTERNAL_ERROR', detail: 'An unexpected error occurred; it has been logged.' };
}

/**
 * Renders every failure as application/problem+json with a stable code. Unknown errors become a 500 with a
 * generic detail: no stack trace, SQL text or secret ever reaches a client.
 */
export function problemMiddleware(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        sendProblem(ctx, { status: 404, code: 'NOT_FOUND', detail: `No route for ${ctx.method} ${ctx.path}.` });
      }
    } catch (error) {
      const problem = fromUnknown(error);
      if (problem.status >= 500) {
        const logger = ctx.state.logger as Logger | undefined;
        logger?.error({ err: error, requestId: ctx.state.requestId }, 'request failed');
      }
      sendProblem(ctx, problem);
    }
  };
}
