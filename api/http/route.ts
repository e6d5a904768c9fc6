import { Static, TSchema } from '@sinclair/typebox';
import Router from '@koa/router';
import { Context, Middleware } from 'koa';
import { koaBody } from 'koa-body';
import { ErrorCode, PlatformError } from '../../lib/errors';
import { Identity, requireInternal, requireRole, requireRoleOrInternal, requireUser, Role } from './identity';
import { answerMismatch, validate } from './validate';
import { answerOncePerKey } from './idempotency';
import { Db } from '../../data/db';

/**
 * Who may call a route; checked before the body is even parsed. `I` is who the handler then has: a user
 * (`Identity`) once a user or a role is required, nobody for public and internal-token routes, either for
 * a role or the internal token. The handler's `identity` is typed by it, so no handler asserts a user.
 */
export type Access<I extends Identity | null = Identity | null> = (
  | { kind: 'public' }
  | { kind: 'user' }
  | { kind: 'roles'; roles: readonly Role[] }
  | { kind: 'internal' }
  | { kind: 'roles-or-internal'; roles: readonly Role[] }
) & { readonly identity?: I };

export const access = {
  public: { kind: 'public' } as Access<null>,
  user: { kind: 'user' } as Access<Identity>,
  internal: { kind: 'internal' } as Access<null>,
  roles: (...roles: Role[]): Access<Identity> => ({ kind: 'roles', roles }),
  rolesOrInternal: (...roles: Role[]): Access<Identity | null> => ({ kind: 'roles-or-internal', roles }),
};

type In<S> = S extends TSchema ? Static<S> : undefined;

export interface RouteInput<B, Q, P, I extends Identity | null = Identity | null> {
  body: In<B>;
  query: In<Q>;
  params: In<P>;
  /** The caller, as the route's access has it: a user where one is required; null for public routes and internal-token callers. */
  identity: I;
}

export interface ResponseSpec {
  description: string;
  schema?: TSchema;
  contentType?: string;
}

export interface RouteDefinition<B = undefined, Q = undefined, P = undefined, I extends Identity | null = Identity | null> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Koa style: `/api/directory/users/:id`. */
  path: string;
  tag: string;
  summary: string;
  access: Access<I>;
  body?: B;
  /** `multipart` bodies arrive as form fields (validated by `body`) and files in `ctx.request.files`. */
  bodyType?: 'json' | 'multipart';
  bodyLimitBytes?: number;
  /** The code of the 413 answer for a body over the limit (default PAYLOAD_TOO_LARGE). */
  tooLargeCode?: ErrorCode;
  /** A request without any body is taken as `{}`. */
  bodyOptional?: boolean;
  query?: Q;
  params?: P;
  responses: Record<number, ResponseSpec>;
  /**
   * The codes this route answers beyond those its access, schemas and body already imply (see
   * declaredErrors). The OpenAPI document lists them per status, the fuzzer holds answers to them, and the
   * test platform fails a test file whose requests drew an undeclared code.
   */
  errors: readonly ErrorCode[];
  /**
   * Takes an `Idempotency-Key` header: the same key and request from the same caller replays the first
   * answer (api/http/idempotency.ts). For routes that send or start something.
   */
  idempotent?: boolean;
  // A method, so that a route of any schemas is an AnyRoute (method parameters are compared bivariantly).
  handler(ctx: Context, input: RouteInput<B, Q, P, I>): Promise<void>;
}

export type AnyRoute = RouteDefinition<TSchema | undefined, TSchema | undefined, TSchema | undefined>;

/** Declares a route; the types of its handler's input follow from its schemas. */
export function defineRoute<
  B extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  P extends TSchema | undefined = undefined,
  I extends Identity | null = Identity | null,
>(definition: RouteDefinition<B, Q, P, I>): RouteDefinition<B, Q, P, I> {
  return definition;
}

/** Every code a route may answer: those implied by its access, schemas and body, then its own. */
export function declaredErrors(route: AnyRoute): ErrorCode[] {
  // Any route may meet the database down (a restart, a failover) or busy: 503, never a 500; lose a race to
  // another request (409); or carry a value the schema refuses (400).
  const codes: ErrorCode[] = ['INTERNAL_ERROR', 'DATABASE_UNAVAILABLE', 'DATABASE_BUSY', 'CONCURRENT_UPDATE', 'CONSTRAINT_VIOLATED'];
  // Every guarded route refuses a caller without credentials (401) and one with the wrong kind or role (403).
  if (route.access.kind !== 'public') codes.push('UNAUTHENTICATED', 'FORBIDDEN');
  if (route.params || route.query || route.body) codes.push('VALIDATION_FAILED');
  if (route.query && 'cursor' in ((route.query.properties ?? {}) as Record<string, unknown>)) codes.push('INVALID_CURSOR');
  if (route.body) codes.push('BAD_REQUEST', 'UNSUPPORTED_MEDIA_TYPE', route.tooLargeCode ?? 'PAYLOAD_TOO_LARGE');
  if (route.idempotent) codes.push('VALIDATION_FAILED', 'IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_REUSED');
  for (const code of route.errors) if (!codes.includes(code)) codes.push(code);
  return codes;
}

function checkAccess(ctx: Context, rule: Access): Identity | null {
  switch (rule.kind) {
    case 'public':
      return null;
    case 'user':
      return requireUser(ctx);
    case 'roles':
      return requireRole(ctx, rule.roles);
    case 'internal':
      requireInternal(ctx);
      return null;
    case 'roles-or-internal':
      return requireRoleOrInternal(ctx, rule.roles);
  }
}

function bodyParser(route: AnyRoute): Middleware {
  const limit = route.bodyLimitBytes ?? 1024 * 1024;
  const tooLarge = () => new PlatformError(route.tooLargeCode ?? 'PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes.`);
  if (route.bodyType === 'multipart') {
    const parse = koaBody({
      multipart: true,
      json: false,
      urlencoded: false,
      text: false,
      // The sha256 is computed as the upload is written, so no handler reads the file again to hash it.
      formidable: { maxFileSize: limit, maxTotalFileSize: limit, maxFiles: 1, allowEmptyFiles: true, minFileSize: 0, hashAlgorithm: 'sha256' },
      onError: (error) => {
        // formidable reports its limits with `httpCode`, which Koa does not read.
        const httpCode = (error as { httpCode?: number }).httpCode;
        if (httpCode === 413) throw tooLarge();
        throw new PlatformError('BAD_REQUEST', 'The multipart body cannot be read.');
      },
    });
    return async (ctx, next) => {
      // Refuse at once what announces itself as too large, before reading a byte of it.
      if (ctx.request.length !== undefined && ctx.request.length > limit + 64 * 1024) throw tooLarge();
      await parse(ctx, next);
    };
  }
  return koaBody({ json: true, jsonStrict: true, jsonLimit: limit, multipart: false, urlencoded: false, text: false });
}

function hasBody(ctx: Context): boolean {
  return Boolean(ctx.request.length) || ctx.get('transfer-encoding') !== '';
}

function requireMediaType(ctx: Context, route: AnyRoute): void {
  if (route.bodyOptional && !hasBody(ctx)) return;
  const wanted = route.bodyType === 'multipart' ? 'multipart/form-data' : 'application/json';
  if (!ctx.is(wanted)) {
    throw new PlatformError('UNSUPPORTED_MEDIA_TYPE', `The request body must be ${wanted}.`);
  }
}

/** An answer outside a route's declared contract: an undeclared status or error code, or a body off its schema. */
export interface ContractBreach {
  route: string;
  breach: string;
}

export interface MountOptions {
  /** Checks every answer against the route's declared responses (the test platform does; production does not). */
  onContractBreach?: (breach: ContractBreach) => void;
  /** Where idempotent routes keep their keys and answers. */
  db?: Db;
}

function checkAnswer(ctx: Context, route: AnyRoute, report: (breach: ContractBreach) => void): void {
  const name = `${route.method.toUpperCase()} ${route.path}`;
  const spec = route.responses[ctx.status];
  if (!spec) return report({ route: name, breach: `answered ${ctx.status}, which it does not declare` });
  const json = !spec.contentType || spec.contentType.includes('json');
  if (!json || ctx.status === 204) return;
  if (!spec.schema) return report({ route: name, breach: `declares no schema for its ${ctx.status} answer` });
  const mismatch = answerMismatch(spec.schema, ctx.body);
  if (mismatch) report({ route: name, breach: `${ctx.status} answer off its schema: ${mismatch}` });
}

/** Mounts routes on a router: access first, then media type, body parsing and validation, then the handler. */
export function mountRoutes(router: Router, routes: AnyRoute[], options: MountOptions = {}): void {
  for (const route of routes) {
    const declared = new Set(declaredErrors(route));
    const stages: Middleware[] = [
      async (ctx, next) => {
        // The problem middleware reads this to tell a declared answer from an undeclared one.
        ctx.state.route = { method: route.method, path: route.path, declared };
        ctx.state.identity = checkAccess(ctx, route.access);
        await next();
      },
    ];
    if (route.body) {
      stages.push(async (ctx, next) => {
        requireMediaType(ctx, route);
        await next();
      });
      stages.push(bodyParser(route));
    }
    stages.push(async (ctx) => {
      const params = route.params ? validate(route.params, { ...ctx.params }, 'params') : undefined;
      const query = route.query ? validate(route.query, { ...ctx.query }, 'query') : undefined;
      const body = route.body ? validate(route.body, ctx.request.body ?? {}, 'body') : undefined;
      const identity = ctx.state.identity as Identity | null;
      const answer = () => route.handler(ctx, { body, query, params, identity });
      if (route.idempotent) {
        if (!options.db) throw new Error(`${route.method.toUpperCase()} ${route.path} is idempotent: mountRoutes needs the database`);
        // One caller's keys are theirs alone: another caller's same key is another request.
        const scope = `${identity ? `user:${identity.id}` : 'internal'} ${route.method.toUpperCase()} ${route.path}`;
        await answerOncePerKey(options.db, ctx, { scope, params: params ?? null, query: query ?? null, body: body ?? null }, answer);
      } else await answer();
      if (options.onContractBreach) checkAnswer(ctx, route, options.onContractBreach);
    });
    router[route.method](route.path, ...stages);
  }
}
