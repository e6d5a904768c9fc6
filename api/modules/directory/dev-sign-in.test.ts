import { decodeJwt } from 'jose';
import { platformWithApi } from '../../../test/support/platform';
import { call, expectProblem } from '../../../test/support/http';

/** The console's development sign-in: a directory user picked, a short-lived token for them; never in production. */
const thisFile = platformWithApi();
let admin: string;

beforeAll(async () => {
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'], sites: [] });
});

test('in development, a directory user is signed in with a token of 60 minutes that carries their roles and sites, and the API takes it', async () => {
  const created = await call(thisFile.api.url, 'POST', '/api/directory/users', {
    token: admin,
    body: { email: 'maya@example.test', name: 'Maya', roles: ['MANAGER'], siteIds: ['site-a', 'site-b'] },
  });
  const choices = await call(thisFile.api.url, 'GET', '/api/directory/dev-sign-in');
  expect(choices.status).toBe(200);
  expect(choices.body.items.map((user: { email: string }) => user.email)).toContain('maya@example.test');

  const signedIn = await call(thisFile.api.url, 'POST', '/api/directory/dev-sign-in', { body: { userId: created.body.id } });
  expect(signedIn.status).toBe(200);
  expect(signedIn.body.user).toEqual(expect.objectContaining({ id: created.body.id, roles: ['MANAGER'], siteIds: ['site-a', 'site-b'] }));
  const claims = decodeJwt(signedIn.body.token);
  expect(claims).toEqual(
    expect.objectContaining({ sub: created.body.id, name: 'Maya', email: 'maya@example.test', roles: ['MANAGER'], sites: ['site-a', 'site-b'] }),
  );
  expect(claims.exp! - claims.iat!).toBe(3600);
  expect(Math.abs(Date.parse(signedIn.body.expiresAt) / 1000 - claims.exp!)).toBeLessThanOrEqual(1);
  const me = await call(thisFile.api.url, 'GET', '/api/directory/me', { token: signedIn.body.token });
  expect(me.body).toEqual(expect.objectContaining({ id: created.body.id, name: 'Maya', roles: ['MANAGER'], sites: ['site-a', 'site-b'] }));
});

test('an unknown user -> 404; a body that is not a user id -> 400; nothing is signed', async () => {
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/directory/dev-sign-in', { body: { userId: '00000000-0000-4000-8000-000000000000' } }),
    404,
    'NOT_FOUND',
  );
  expectProblem(await call(thisFile.api.url, 'POST', '/api/directory/dev-sign-in', { body: { userId: 'ada', roles: ['ADMIN'] } }), 400, 'VALIDATION_FAILED');
});

test('in production both routes answer 404, whoever asks and however: no list of users, no token', async () => {
  const production = await thisFile.platform.startApi({ config: { ...thisFile.platform.config, production: true } });
  const created = await call(thisFile.api.url, 'POST', '/api/directory/users', {
    token: admin,
    body: { email: 'omar@example.test', name: 'Omar', roles: ['ADMIN'], siteIds: [] },
  });
  for (const token of [undefined, admin]) {
    const choices = await call(production.url, 'GET', '/api/directory/dev-sign-in', { token });
    expectProblem(choices, 404, 'NOT_FOUND');
    expect(JSON.stringify(choices.body)).not.toContain('omar@example.test');
    const signedIn = await call(production.url, 'POST', '/api/directory/dev-sign-in', { token, body: { userId: created.body.id } });
    expectProblem(signedIn, 404, 'NOT_FOUND');
    expect(signedIn.body.token).toBeUndefined();
  }
});

test('without an identity provider: the options say development sign-in only, and the code exchange does not exist', async () => {
  expect((await call(thisFile.api.url, 'GET', '/api/directory/sign-in-options')).body).toEqual({ development: true, identityProvider: null });
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/directory/sign-in/token', {
      body: { code: 'x', codeVerifier: 'v'.repeat(43), redirectUri: `${thisFile.api.url}/console/` },
    }),
    404,
    'NOT_FOUND',
  );
});

test('a 400 KB body nested 100,000 deep, sent without a token, is 400 VALIDATION_FAILED, not a stack overflow', async () => {
  const depth = 100_000;
  const raw = `{"code":${'['.repeat(depth)}${']'.repeat(depth)},"codeVerifier":"x","redirectUri":"x"}`;
  const answer = await call(thisFile.api.url, 'POST', '/api/directory/sign-in/token', { raw, headers: { 'content-type': 'application/json' } });
  expectProblem(answer, 400, 'VALIDATION_FAILED');
  expect(answer.text).toMatch(/nested/);
  // Nested within the limit, and the API still answers as before.
  expect((await call(thisFile.api.url, 'GET', '/healthz')).status).toBe(200);
});
