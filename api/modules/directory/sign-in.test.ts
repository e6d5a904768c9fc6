import crypto from 'node:crypto';
import { decodeJwt } from 'jose';
import { attachPlatform, RunningApi, TestPlatform } from '../../../test/support/platform';
import { call, expectProblem } from '../../../test/support/http';
import { IdentityProvider, startIdentityProvider } from '../../../test/support/identity-provider';

/**
 * Sign-in through the organisation's identity provider: a real OpenID Connect provider on loopback issues
 * RS256 tokens; the platform (JWT_JWKS_URL, JWT_ISSUER, JWT_AUDIENCE, OIDC_CLIENT_ID) exchanges the console's
 * code and hands back only a token it accepts.
 */
let provider: IdentityProvider;
let platform: TestPlatform;
let api: RunningApi;
let consoleUrl = '';

beforeAll(async () => {
  provider = await startIdentityProvider({
    users: [{ sub: 'idp-ada', name: 'Ada from the IdP', email: 'ada@idp.test', roles: ['ADMIN'], sites: [] }],
    redirectUri: () => consoleUrl,
  });
  platform = await attachPlatform({
    env: { JWT_JWKS_URL: provider.jwksUrl, JWT_ISSUER: provider.issuer, JWT_AUDIENCE: provider.audience, OIDC_CLIENT_ID: provider.clientId },
  });
  api = await platform.startApi();
  consoleUrl = `${api.url}/console/`;
});

afterAll(async () => {
  await platform?.close();
  await provider?.close();
});

/** What the console does: a PKCE pair, then the provider's sign-in form submitted; answers the code it sent back. */
async function authorize(verifier = crypto.randomBytes(32).toString('base64url')) {
  const challenge = crypto.createHash('sha256').update(verifier).digest('base64url');
  const form = new URLSearchParams({
    response_type: 'code',
    client_id: provider.clientId,
    redirect_uri: consoleUrl,
    scope: 'openid',
    state: 's1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    user: '0',
  });
  const answer = await fetch(`${provider.issuer}/authorize`, { method: 'POST', body: form, redirect: 'manual' });
  const back = new URL(answer.headers.get('location')!);
  return { code: back.searchParams.get('code')!, verifier };
}

const exchange = (body: Record<string, unknown>) => call(api.url, 'POST', '/api/directory/sign-in/token', { body });

test("the options name the provider's authorization endpoint and the console's client; development sign-in is off", async () => {
  expect((await call(api.url, 'GET', '/api/directory/sign-in-options')).body).toEqual({
    development: false,
    identityProvider: { authorizationEndpoint: `${provider.issuer}/authorize`, clientId: provider.clientId, scope: 'openid profile email' },
  });
  expectProblem(await call(api.url, 'GET', '/api/directory/dev-sign-in'), 404, 'NOT_FOUND');
});

test("a code exchanged with its verifier gives the provider's token, which the platform (edge and API) accepts with the claims it carries", async () => {
  const { code, verifier } = await authorize();
  const signedIn = await exchange({ code, codeVerifier: verifier, redirectUri: consoleUrl });
  expect(signedIn.status).toBe(200);
  const claims = decodeJwt(signedIn.body.token);
  expect(claims).toEqual(expect.objectContaining({ iss: provider.issuer, aud: provider.audience, sub: 'idp-ada', roles: ['ADMIN'] }));
  expect(signedIn.body.expiresAt).toBe(new Date(claims.exp! * 1000).toISOString());
  const me = await call(api.url, 'GET', '/api/directory/me', { token: signedIn.body.token });
  expect(me.body).toEqual(expect.objectContaining({ id: 'idp-ada', name: 'Ada from the IdP', roles: ['ADMIN'] }));
});

test('attacks on the exchange: a wrong verifier, a replayed code, an unknown code -> 401; the provider never hands out a token for them', async () => {
  const { code, verifier } = await authorize();
  expectProblem(await exchange({ code, codeVerifier: crypto.randomBytes(32).toString('base64url'), redirectUri: consoleUrl }), 401, 'UNAUTHENTICATED');
  // The provider spent the code on the failed attempt: the right verifier cannot use it any more.
  expectProblem(await exchange({ code, codeVerifier: verifier, redirectUri: consoleUrl }), 401, 'UNAUTHENTICATED');
  expectProblem(await exchange({ code: 'made-up', codeVerifier: verifier, redirectUri: consoleUrl }), 401, 'UNAUTHENTICATED');
  const good = await authorize();
  expect((await exchange({ code: good.code, codeVerifier: good.verifier, redirectUri: consoleUrl })).status).toBe(200);
  expectProblem(await exchange({ code: good.code, codeVerifier: good.verifier, redirectUri: consoleUrl }), 401, 'UNAUTHENTICATED');
});

test('the exchange is for the console only: another redirect URI, a short verifier, an extra field -> 400, and the provider is not asked', async () => {
  const asked = provider.tokenRequests.length;
  const { code, verifier } = await authorize();
  for (const redirectUri of [`${api.url}/elsewhere/`, 'javascript:alert(1)//console/', `${api.url}/console/?next=https://evil.test`, 'not a url']) {
    expectProblem(await exchange({ code, codeVerifier: verifier, redirectUri }), 400, 'VALIDATION_FAILED');
  }
  expectProblem(await exchange({ code, codeVerifier: 'short', redirectUri: consoleUrl }), 400, 'VALIDATION_FAILED');
  expectProblem(await exchange({ code, codeVerifier: verifier, redirectUri: consoleUrl, clientSecret: 'x' }), 400, 'VALIDATION_FAILED');
  expect(provider.tokenRequests.length).toBe(asked);
});

test('a token the provider issues for another audience is not handed to the console: 401', async () => {
  provider.issueForAudience('some-other-app');
  try {
    const { code, verifier } = await authorize();
    const answer = await exchange({ code, codeVerifier: verifier, redirectUri: consoleUrl });
    expectProblem(answer, 401, 'UNAUTHENTICATED');
    expect(answer.text).not.toContain('ey');
  } finally {
    provider.issueForAudience(null);
  }
});

test('the provider down -> 503 IDENTITY_PROVIDER_UNAVAILABLE for the options and the exchange', async () => {
  const unreachable = await platform.startApi({
    config: { ...platform.config, identity: { ...platform.config.identity, issuer: 'http://127.0.0.1:9', oidcClientId: 'opsflow-console' } },
  });
  try {
    expectProblem(await call(unreachable.url, 'GET', '/api/directory/sign-in-options'), 503, 'IDENTITY_PROVIDER_UNAVAILABLE');
    expectProblem(
      await call(unreachable.url, 'POST', '/api/directory/sign-in/token', {
        body: { code: 'c', codeVerifier: 'v'.repeat(43), redirectUri: `${platform.config.api.publicUrl}/console/` },
      }),
      503,
      'IDENTITY_PROVIDER_UNAVAILABLE',
    );
  } finally {
    await unreachable.close();
  }
});
