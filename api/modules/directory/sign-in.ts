import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { TokenVerifier } from '../../http/identity';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { Instant, Nullable } from '../../http/common-schemas';
import { badRequest, notFound, unauthenticated } from '../../../lib/errors';
import { identityProviderClient } from '../../../adapters/directory/identity-provider';
import { outboundPolicyOf } from '../../../adapters/messaging/outbound';
import { devSignInIsOn } from './dev-sign-in';
import { signInLimit } from '../../http/address-limit';
import type { Config } from '../../../lib/config';

/** The console's own page: the only redirect URI whose codes this platform exchanges. */
export const CONSOLE_REDIRECT_PATH = '/console/';

/**
 * The console at PUBLIC_URL, origin and path: a code sent back to any other page (another origin with the
 * console's path, say) is not exchanged. In development the other loopback spelling too (localhost and
 * 127.0.0.1 are one machine, and `npm start` prints one while a browser may keep the other).
 */
export function consoleRedirectUris(config: Pick<Config, 'api' | 'production'>): string[] {
  const console = new URL(CONSOLE_REDIRECT_PATH, `${config.api.publicUrl}/`);
  const uris = [console.href];
  const other = console.hostname === 'localhost' ? '127.0.0.1' : console.hostname === '127.0.0.1' ? 'localhost' : null;
  if (!config.production && other) uris.push(`${console.protocol}//${other}${console.port ? `:${console.port}` : ''}${console.pathname}`);
  return uris;
}

const SignInOptionsSchema = Type.Object({
  /** Development sign-in (pick a directory user) is on: development, and no identity provider configured. */
  development: Type.Boolean(),
  identityProvider: Nullable(Type.Object({ authorizationEndpoint: Type.String(), clientId: Type.String(), scope: Type.String() })),
});

const TokenExchangeBody = Type.Object(
  {
    code: Type.String({ minLength: 1, maxLength: 2048 }),
    // RFC 7636: 43 to 128 unreserved characters.
    codeVerifier: Type.String({ pattern: '^[A-Za-z0-9._~-]{43,128}$' }),
    redirectUri: Type.String({ minLength: 1, maxLength: 2048 }),
  },
  { additionalProperties: false },
);
const SignedInSchema = Type.Object({ token: Type.String(), expiresAt: Instant });

/**
 * Sign-in through the organisation's identity provider (OpenID Connect, authorization code with PKCE),
 * when JWT_JWKS_URL, JWT_ISSUER, JWT_AUDIENCE and OIDC_CLIENT_ID are set. The console sends the person to
 * the provider; the code it brings back is exchanged here, server to server (the console's content policy
 * stays `connect-src 'self'`), and the access token is handed to the console only if this platform
 * accepts it: the provider's signature, issuer, audience and expiry, as every request is checked.
 */
export function signInRoutes(deps: AppDeps, verifier: TokenVerifier): AnyRoute[] {
  const { config } = deps;
  const consoleRedirects = consoleRedirectUris(config);
  const limitSignIns = signInLimit(config);
  const provider =
    config.identity.oidcClientId && config.identity.issuer
      ? identityProviderClient({ issuer: config.identity.issuer, clientId: config.identity.oidcClientId, policy: outboundPolicyOf(config, 'jwks') })
      : null;
  return [
    defineRoute({
      method: 'get',
      path: '/api/directory/sign-in-options',
      tag: 'directory',
      summary: "How the console signs people in here: development sign-in, and the organisation's identity provider when one is configured",
      access: access.public,
      responses: { 200: { description: 'the ways to sign in', schema: SignInOptionsSchema } },
      errors: ['IDENTITY_PROVIDER_UNAVAILABLE'],
      handler: async (ctx) => {
        const endpoints = provider ? await provider.endpoints() : null;
        ctx.body = {
          development: devSignInIsOn(config),
          identityProvider: endpoints
            ? { authorizationEndpoint: endpoints.authorizationEndpoint, clientId: config.identity.oidcClientId!, scope: config.identity.oidcScope }
            : null,
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/directory/sign-in/token',
      tag: 'directory',
      summary: 'Exchange the authorization code the identity provider sent back to the console (PKCE) for a token this platform accepts',
      access: access.public,
      body: TokenExchangeBody,
      responses: { 200: { description: 'the token, verified as every request is', schema: SignedInSchema } },
      errors: ['NOT_FOUND', 'UNAUTHENTICATED', 'IDENTITY_PROVIDER_UNAVAILABLE', 'RATE_LIMITED'],
      handler: async (ctx, { body }) => {
        if (!provider) throw notFound('No identity provider is configured (OIDC_CLIENT_ID).');
        limitSignIns(ctx);
        if (!consoleRedirects.includes(body.redirectUri)) {
          throw badRequest('VALIDATION_FAILED', 'The redirect URI is not the console.', [
            { path: 'body.redirectUri', message: `must be the console at ${consoleRedirects[0]}` },
          ]);
        }
        const token = await provider.exchangeCode(body);
        if (!token) throw unauthenticated('The identity provider refused the sign-in code.');
        const claims = await verifier.verify(token).catch(() => null);
        if (!claims) throw unauthenticated('The identity provider issued a token this platform does not accept (issuer, audience, expiry or signature).');
        ctx.body = { token, expiresAt: new Date((claims.exp as number) * 1000).toISOString() };
      },
    }),
  ];
}
