import { attachPlatform, RunningApi, TestPlatform } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { IdentityProvider, ProviderUser, startIdentityProvider } from '../support/identity-provider';
import { loadConfig } from '../../lib/config';

/**
 * Sign-in through the organisation's identity provider, as an attacker tries it: a code sent back to a
 * page of theirs, an ID token offered as an access token, and a flood of code exchanges from one address.
 */
let platform: TestPlatform;
let provider: IdentityProvider;
let api: RunningApi;
let direct: RunningApi;
const ADA: ProviderUser = { sub: 'idp-ada', name: 'Ada', email: 'ada@idp.test', roles: ['ADMIN'], sites: [] };
const VERIFIER = 'v'.repeat(43);

beforeAll(async () => {
  platform = await attachPlatform();
  provider = await startIdentityProvider({ users: [ADA], redirectUri: () => null });
  const config = {
    ...platform.config,
    identity: {
      ...platform.config.identity,
      jwksUrl: provider.jwksUrl,
      issuer: provider.issuer,
      audience: provider.audience,
      oidcClientId: provider.clientId,
    },
    limits: { ...platform.config.limits, signInRateLimit: 5, signInRateWindowSeconds: 600 },
  };
  // The first API is behind the platform's edge (which sets X-Forwarded-For); the second is reached directly.
  api = await platform.startApi({ config });
  direct = await platform.startApi({ config });
});

afterAll(async () => {
  await provider?.close();
  await platform?.close();
});

const exchange = (base: string, redirectUri: string, headers: Record<string, string> = {}) =>
  call(base, 'POST', '/api/directory/sign-in/token', { body: { code: 'a-code', codeVerifier: VERIFIER, redirectUri }, headers });

test("a code is exchanged only for the console at PUBLIC_URL: another origin, even with the console's path, is refused before the provider is asked", async () => {
  const asked = provider.tokenRequests.length;
  const publicUrl = new URL(platform.config.api.publicUrl);
  for (const redirectUri of [
    'http://evil.example/console/',
    `https://${publicUrl.host}/console/`,
    `${publicUrl.origin}/console/x`,
    `http://${publicUrl.hostname}:1/console/`,
  ]) {
    const answer = await exchange(direct.url, redirectUri, { 'x-forwarded-for': '198.51.100.1' });
    expectProblem(answer, 400, 'VALIDATION_FAILED');
  }
  expect(provider.tokenRequests.length).toBe(asked);
  // The console's own address (and, in development, its other loopback spelling) reaches the provider, which refuses the made-up code.
  const other = publicUrl.hostname === 'localhost' ? '127.0.0.1' : 'localhost';
  for (const redirectUri of [`${publicUrl.origin}/console/`, `${publicUrl.protocol}//${other}:${publicUrl.port}/console/`]) {
    expectProblem(await exchange(direct.url, redirectUri, { 'x-forwarded-for': '198.51.100.2' }), 401, 'UNAUTHENTICATED');
  }
  expect(provider.tokenRequests.length).toBe(asked + 2);
});

test('an ID token is not taken for an access token: a nonce, an at_hash, a Keycloak typ of ID, or a header typ other than JWT or at+jwt is refused', async () => {
  const me = (token: string) => call(direct.url, 'GET', '/api/directory/me', { token });
  expect((await me(await provider.signFor(ADA))).status).toBe(200);
  expect((await me(await provider.signFor(ADA, { typ: 'at+jwt' }))).status).toBe(200);
  expect((await me(await provider.signFor(ADA, { typ: 'JWT', claims: { typ: 'Bearer', azp: provider.clientId } }))).status).toBe(200);
  for (const idToken of [
    await provider.signFor(ADA, { claims: { nonce: 'n-0S6_WzA2Mj' } }),
    await provider.signFor(ADA, { claims: { at_hash: 'HK6E_P6Dh8Y93mRNtsDB1Q' } }),
    await provider.signFor(ADA, { claims: { typ: 'ID', azp: provider.clientId } }),
    await provider.signFor(ADA, { typ: 'id_token+jwt' }),
    await provider.signFor(ADA, { typ: 'logout+jwt' }),
  ]) {
    expectProblem(await me(idToken), 401, 'UNAUTHENTICATED');
  }
});

test('code exchanges are limited per address: past the limit 429 RATE_LIMITED with Retry-After, and the provider is not asked; another address is still served', async () => {
  const redirectUri = `${platform.config.api.publicUrl}/console/`;
  const asked = provider.tokenRequests.length;
  // Through the edge, whatever X-Forwarded-For the caller sends: the edge writes the address it saw.
  const statuses: number[] = [];
  for (let i = 0; i < 7; i++) statuses.push((await exchange(api.url, redirectUri, { 'x-forwarded-for': `203.0.113.${i}` })).status);
  expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
  const limited = await exchange(api.url, redirectUri);
  expectProblem(limited, 429, 'RATE_LIMITED');
  expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(provider.tokenRequests.length).toBe(asked + 5);
  // Another client address (the edge's forwarded one, here set by hand on the API reached directly) is still served.
  expectProblem(await exchange(direct.url, redirectUri, { 'x-forwarded-for': '192.0.2.77' }), 401, 'UNAUTHENTICATED');
});

test('JWT_AUDIENCE equal to OIDC_CLIENT_ID stops the start: ID tokens, which name the client, would pass for access tokens at the edge', () => {
  const env = {
    ...process.env,
    NODE_ENV: 'test',
    JWT_JWKS_URL: 'http://127.0.0.1:9/jwks',
    JWT_ISSUER: 'http://127.0.0.1:9',
    JWT_AUDIENCE: 'console',
    OIDC_CLIENT_ID: 'console',
  };
  expect(() => loadConfig(env)).toThrow(/JWT_AUDIENCE: must differ from OIDC_CLIENT_ID/);
  expect(loadConfig({ ...env, JWT_AUDIENCE: 'opsflow' }).identity.audience).toBe('opsflow');
});
