import crypto from 'node:crypto';
import { Context, Middleware } from 'koa';
import { createLocalJWKSet, JSONWebKeySet, JWTPayload, jwtVerify, KeyLike, JWTVerifyGetKey } from 'jose';
import { Config } from '../../lib/config';
import { guardedFetch, outboundPolicyOf } from '../../adapters/messaging/outbound';
import { forbidden, unauthenticated } from '../../lib/errors';
import { Logger } from '../../lib/logger';

export const ROLES = ['ADMIN', 'MANAGER', 'EDITOR', 'VIEWER'] as const;
export type Role = (typeof ROLES)[number];

/** Who is calling, as the gateway's `X-User-*` headers say. Modules read identity only from these. */
export interface Identity {
  id: string;
  name: string;
  email: string;
  roles: string[];
  sites: string[];
  siteId: string | null;
}

export const USER_HEADERS = {
  id: 'x-user-id',
  name: 'x-user-name',
  email: 'x-user-email',
  roles: 'x-user-roles',
  sites: 'x-user-sites',
  siteId: 'x-user-site-id',
} as const;

/** Any spelling a client might use to smuggle identity: X-User-*, X_User_*, mixed case. */
const USER_HEADER_PATTERN = /^x[-_]user[-_]/i;

const HS_ALGORITHMS = ['HS256'];
const JWKS_ALGORITHMS = ['RS256', 'ES256'];
const JWKS_REFRESH_MS = 10 * 60 * 1000;
const VERIFIED_TOKEN_TTL_MS = 60 * 1000;
const VERIFIED_TOKENS_KEPT = 10000;

export interface TokenVerifier {
  verify(token: string): Promise<JWTPayload>;
  /** The claims of a token verified a moment ago and still valid, without checking it again; else null. */
  remembered(token: string): JWTPayload | null;
  close(): void;
}

/**
 * Verifies user JWTs with an allow-list of algorithms (never `none`). With `JWT_JWKS_URL` the key set is
 * fetched at start and on a timer, never because of a token: a `jku`, `x5u` or unknown `kid` in a token
 * makes the gateway fetch nothing.
 */
export function createTokenVerifier(args: { config: Config; logger: Logger }): TokenVerifier {
  const verifier = signatureVerifier(args);
  return { ...rememberVerified(verifier.verify), close: verifier.close };
}

/**
 * A client sends the same token with every request: its signature is checked once, and the claims are
 * reused until the token expires, at most a minute (so a key dropped from the JWKS stops working soon).
 * Only tokens that passed are kept, the oldest dropped first beyond a bound.
 */
function rememberVerified(verify: (token: string) => Promise<JWTPayload>): Pick<TokenVerifier, 'verify' | 'remembered'> {
  const verified = new Map<string, { claims: JWTPayload; until: number }>();
  const remembered = (token: string): JWTPayload | null => {
    const known = verified.get(token);
    if (!known) return null;
    if (Date.now() < known.until) return known.claims;
    verified.delete(token);
    return null;
  };
  return {
    remembered,
    verify: async (token) => {
      const known = remembered(token);
      if (known) return known;
      const claims = await verify(token);
      // Never past the token's own expiry (exp is required, so always a number here).
      const until = Math.min(Date.now() + VERIFIED_TOKEN_TTL_MS, (claims.exp as number) * 1000);
      if (verified.size >= VERIFIED_TOKENS_KEPT) verified.delete(verified.keys().next().value as string);
      verified.set(token, { claims, until });
      return claims;
    },
  };
}

/** Header types an access token may carry: none, the generic one, or RFC 9068's. */
const ACCESS_TOKEN_TYPES = new Set(['jwt', 'at+jwt', 'application/at+jwt']);

/**
 * What marks a token of the identity provider as something other than an access token, or null: an ID token
 * is signed with the same keys and, when JWT_AUDIENCE is the console's client id, names the same audience,
 * yet it says who signed in to the console, not what a caller may do. A header type other than an access
 * token's (`id_token+jwt`, `logout+jwt`), Keycloak's `typ` claim of `ID`, or a claim only ID tokens carry
 * (OpenID Connect Core: `nonce`, `at_hash`, `c_hash`) refuses it.
 */
export function idTokenSign(headerType: string | undefined, claims: JWTPayload): string | null {
  if (headerType !== undefined && !ACCESS_TOKEN_TYPES.has(headerType.toLowerCase())) return `its header type is ${headerType}`;
  if (typeof claims.typ === 'string' && claims.typ.toLowerCase() === 'id') return 'its typ claim is ID';
  const idOnly = ['nonce', 'at_hash', 'c_hash'].find((claim) => claim in claims);
  return idOnly ? `it carries ${idOnly}, an ID token's claim` : null;
}

function signatureVerifier(args: { config: Config; logger: Logger }): Pick<TokenVerifier, 'verify' | 'close'> {
  const { config } = args;
  const options = {
    issuer: config.identity.issuer ?? undefined,
    audience: config.identity.audience ?? undefined,
    // A token without an expiry would be good forever.
    requiredClaims: ['exp'],
    clockTolerance: 5,
  };
  if (!config.identity.jwksUrl) {
    const secret = new TextEncoder().encode(config.identity.jwtSecret);
    return {
      verify: async (token) => (await jwtVerify(token, secret, { ...options, algorithms: HS_ALGORITHMS })).payload,
      close: () => undefined,
    };
  }
  const jwksUrl = config.identity.jwksUrl;
  let keys: JWTVerifyGetKey | null = null;
  const refresh = async () => {
    try {
      // The identity provider's keys come over a connection the outbound guard checks (OUTBOUND_ALLOW names an internal one).
      const answer = await guardedFetch(jwksUrl, { redirect: 'error', signal: AbortSignal.timeout(5000) }, outboundPolicyOf(config, 'jwks'));
      if (!answer.ok) throw new Error(`JWKS answered ${answer.status}`);
      keys = createLocalJWKSet((await answer.json()) as JSONWebKeySet);
    } catch (error) {
      args.logger.warn({ err: error }, 'could not refresh the JWKS; keeping the previous keys');
    }
  };
  const ready = refresh();
  const timer = setInterval(() => void refresh(), JWKS_REFRESH_MS);
  timer.unref();
  return {
    verify: async (token) => {
      await ready;
      if (!keys) throw new Error('no signing keys loaded');
      const getKey = keys as (...a: Parameters<JWTVerifyGetKey>) => Promise<KeyLike | Uint8Array>;
      const verified = await jwtVerify(token, getKey, { ...options, algorithms: JWKS_ALGORITHMS });
      const idToken = idTokenSign(verified.protectedHeader.typ, verified.payload);
      if (idToken) throw new Error(`not an access token: ${idToken}`);
      return verified.payload;
    },
    close: () => clearInterval(timer),
  };
}

function bearer(ctx: Context): string | null {
  const header = ctx.get('authorization');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

const sha256 = (value: string) => crypto.createHash('sha256').update(value).digest();

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** Header values must not carry separators or line breaks that would change their meaning downstream. */
function headerSafe(value: string): string {
  return value.replace(/[\r\n,]/g, ' ').trim();
}

/** Each verified token's claims are turned into X-User-* headers once, not on every request. */
const headersByClaims = new WeakMap<JWTPayload, Record<string, string>>();

function userHeaders(claims: JWTPayload): Record<string, string> {
  const known = headersByClaims.get(claims);
  if (known) return known;
  if (typeof claims.sub !== 'string' || claims.sub === '') throw unauthenticated('The token has no subject.');
  const headers = {
    [USER_HEADERS.id]: headerSafe(claims.sub),
    [USER_HEADERS.name]: headerSafe(typeof claims.name === 'string' ? claims.name : ''),
    [USER_HEADERS.email]: headerSafe(typeof claims.email === 'string' ? claims.email : ''),
    [USER_HEADERS.roles]: stringList(claims.roles).map(headerSafe).join(','),
    [USER_HEADERS.sites]: stringList(claims.sites).map(headerSafe).join(','),
    [USER_HEADERS.siteId]: typeof claims.site === 'string' ? headerSafe(claims.site) : '',
  };
  headersByClaims.set(claims, headers);
  return headers;
}

/**
 * The gateway's identity layer. Every incoming `X-User-*` header is deleted first; then a verified user
 * token sets them again from its claims. The internal token marks the request as internal and sets none.
 * A bearer token that is neither: 401.
 */
export function gatewayIdentity(args: { verifier: TokenVerifier; internalToken: string }): Middleware {
  // Digests of equal length make the comparison's time independent of the token's length and content.
  const internalDigest = sha256(args.internalToken);
  return async (ctx, next) => {
    for (const name of Object.keys(ctx.req.headers)) {
      if (USER_HEADER_PATTERN.test(name)) delete ctx.req.headers[name];
    }
    ctx.state.internal = false;
    const token = bearer(ctx);
    if (token !== null) {
      // A client sends the same token with every request: one verified a moment ago is taken as it is.
      const remembered = args.verifier.remembered(token);
      if (remembered) {
        Object.assign(ctx.req.headers, userHeaders(remembered));
      } else if (crypto.timingSafeEqual(sha256(token), internalDigest)) {
        ctx.state.internal = true;
      } else {
        let claims: JWTPayload;
        try {
          claims = await args.verifier.verify(token);
        } catch {
          throw unauthenticated('The bearer token is not valid.');
        }
        Object.assign(ctx.req.headers, userHeaders(claims));
      }
    }
    await next();
  };
}

const list = (value: string | undefined) =>
  value
    ? value
        .split(',')
        .map((v) => v.trim())
        .filter(Boolean)
    : [];

/** Reads the identity the gateway set; null when the request carries no user. */
export function identityOf(ctx: Context): Identity | null {
  const headers = ctx.req.headers;
  const id = headers[USER_HEADERS.id];
  if (typeof id !== 'string' || id === '') return null;
  const one = (name: string) => (typeof headers[name] === 'string' ? (headers[name] as string) : '');
  return {
    id,
    name: one(USER_HEADERS.name),
    email: one(USER_HEADERS.email),
    roles: list(one(USER_HEADERS.roles)),
    sites: list(one(USER_HEADERS.sites)),
    siteId: one(USER_HEADERS.siteId) || null,
  };
}

export function requireUser(ctx: Context): Identity {
  const identity = identityOf(ctx);
  if (!identity) {
    if (ctx.state.internal) throw forbidden('This endpoint is for users, not the internal token.');
    throw unauthenticated();
  }
  return identity;
}

export function hasRole(identity: Identity, roles: readonly string[]): boolean {
  return identity.roles.includes('ADMIN') || roles.some((role) => identity.roles.includes(role));
}

/** A user holding one of `roles` (ADMIN holds them all); 401 without a user, 403 without the role. */
export function requireRole(ctx: Context, roles: readonly Role[]): Identity {
  const identity = requireUser(ctx);
  if (!hasRole(identity, roles)) throw forbidden(`This needs one of the roles ${roles.join(', ')}.`);
  return identity;
}

export function belongsToSite(identity: Identity, siteId: string): boolean {
  return identity.roles.includes('ADMIN') || identity.sites.includes(siteId);
}

/** 403 unless the user belongs to the site (ADMIN belongs to every site). */
export function requireSiteMember(identity: Identity, siteId: string): void {
  if (!belongsToSite(identity, siteId)) throw forbidden(`You do not belong to site ${siteId}.`);
}

/** Internal endpoints take only the internal token: 401 without a token, 403 for a user's token. */
export function requireInternal(ctx: Context): void {
  if (ctx.state.internal) return;
  if (identityOf(ctx)) throw forbidden('This endpoint accepts only the internal token.');
  throw unauthenticated('The internal token is required.');
}

/** A user with one of `roles`, or the internal token; returns the user, or null for internal callers. */
export function requireRoleOrInternal(ctx: Context, roles: readonly Role[]): Identity | null {
  if (ctx.state.internal) return null;
  return requireRole(ctx, roles);
}
