import crypto from 'node:crypto';
import { Middleware } from 'koa';
import { Counter, Histogram, Registry } from 'prom-client';
import { Logger } from '../../lib/logger';
import { nameRequestSpan } from '../../lib/tracing';
import { USER_HEADERS } from './identity';
import { loggablePath } from '../../lib/link-secrets';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Gives each request an id (the caller's `X-Request-Id` when it is well-formed), one access log line with
 * that id and the user id, and the request metrics. Lines carry the request id as a field rather than
 * through a child logger: a pino child per request cost the gateway measurable CPU (README, Benchmarks).
 */
export function requestContext(args: { logger: Logger; metrics: Registry }): Middleware {
  const requests = new Counter({
    name: 'opsflow_http_requests_total',
    help: 'HTTP requests answered, by method, route and status',
    labelNames: ['method', 'route', 'status'],
    registers: [args.metrics],
  });
  const duration = new Histogram({
    name: 'opsflow_http_request_duration_seconds',
    help: 'HTTP request duration in seconds, by method, route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [args.metrics],
  });
  // The access line's fields are fixed and none is a secret, so it skips the key-based redaction every other
  // line goes through, which cost more than writing the line (README, Benchmarks).
  const accessLog = args.logger.child({}, { redact: [] });
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    ctx.req.headers['x-request-id'] = requestId;
    ctx.state.logger = args.logger;
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (ctx as unknown as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      const labels = { method: ctx.method, route, status: String(ctx.status) };
      requests.inc(labels);
      nameRequestSpan(ctx.method, route);
      duration.observe(labels, seconds);
      const userId = ctx.req.headers[USER_HEADERS.id];
      accessLog.info(
        { requestId, method: ctx.method, path: loggablePath(ctx.path), status: ctx.status, ms: Math.round(seconds * 1000), userId: userId ?? null },
        'request',
      );
    }
  };
}
