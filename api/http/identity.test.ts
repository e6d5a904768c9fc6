import http from 'node:http';
import { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { loadConfig } from '../../lib/config';
import { platformWithApi, RunningApi } from '../../test/support/platform';
import { call, expectProblem } from '../../test/support/http';

const thisFile = platformWithApi();
const viewer = { sub: 'vera', name: 'Vera Viewer', email: 'vera@example.test', roles: ['VIEWER'], sites: ['site-a'] };

function base64url(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

describe('the gateway identity layer', () => {
  test('no token on a user endpoint -> 401 UNAUTHENTICATED', async () => {
    expectProblem(await call(thisFile.api.url, 'GET', '/api/directory/me'), 401, 'UNAUTHENTICATED');
  });

  test('a token signed with another secret -> 401', async () => {
    const token = await new SignJWT({ ...viewer })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('some-other-secret-entirely'));
    expectProblem(await call(thisFile.api.url, 'GET', '/api/directory/me', { token }), 401, 'UNAUTHENTICATED');
  });

  test('an unsigned token (alg: none) -> 401', async () => {
    const token = `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ ...viewer, roles: ['ADMIN'], exp: Math.floor(Date.now() / 1000) + 3600 })}.`;
    expectProblem(await call(thisFile.api.url, 'GET', '/api/directory/me', { token }), 401, 'UNAUTHENTICATED');
  });

  test('a well-signed token without exp -> 401: it would be good forever', async () => {
    const token = await new SignJWT({ ...viewer, roles: ['ADMIN'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt()
      .sign(new TextEncoder().encode(thisFile.platform.config.identity.jwtSecret));
    expectProblem(await call(thisFile.api.url, 'GET', '/api/directory/me', { token }), 401, 'UNAUTHENTICATED');
    expectProblem(await call(thisFile.api.url, 'GET', '/api/directory/users', { token }), 401, 'UNAUTHENTICATED');
  });

  test('an expired token -> 401', async () => {
    const token = await new SignJWT({ ...viewer })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(new TextEncoder().encode(thisFile.platform.config.identity.jwtSecret));
    expectProblem(await call(thisFile.api.url, 'GET', '/api/directory/me', { token }), 401, 'UNAUTHENTICATED');
  });

  test('a token accepted while valid is refused once it has expired, though verified tokens are remembered', async () => {
    const expiresAt = Math.floor(Date.now() / 1000) + 2;
    const token = await new SignJWT({ ...viewer })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(expiresAt)
      .sign(new TextEncoder().encode(thisFile.platform.config.identity.jwtSecret));
    expect((await call(thisFile.api.url, 'GET', '/api/directory/me', { token })).status).toBe(200);
    expect((await call(thisFile.api.url, 'GET', '/api/directory/me', { token })).status).toBe(200);
    // Past the expiry and the 5 s clock tolerance.
    await new Promise((resolve) => setTimeout(resolve, expiresAt * 1000 + 6500 - Date.now()));
    expectProblem(await call(thisFile.api.url, 'GET', '/api/directory/me', { token }), 401, 'UNAUTHENTICATED');
  });

  test('a token with a jku header pointing elsewhere is verified with the configured secret only', async () => {
    const token = await new SignJWT({ ...viewer })
      .setProtectedHeader({ alg: 'HS256', jku: 'http://127.0.0.1:1/keys', kid: 'unknown' })
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('attacker-secret-value'));
    expectProblem(await call(thisFile.api.url, 'GET', '/api/directory/me', { token }), 401, 'UNAUTHENTICATED');
  });

  test('a valid token sets the X-User-* identity the modules read', async () => {
    const token = await thisFile.platform.token({ ...viewer, site: 'site-a' });
    const answer = await call(thisFile.api.url, 'GET', '/api/directory/me', { token });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ id: 'vera', name: 'Vera Viewer', email: 'vera@example.test', roles: ['VIEWER'], sites: ['site-a'], siteId: 'site-a' });
  });

  test('a VIEWER with forged X-User-Roles: ADMIN (any spelling) does not get admin rights', async () => {
    const token = await thisFile.platform.token(viewer);
    const forged = {
      'X-User-Roles': 'ADMIN',
      'x-user-id': 'root',
      X_User_Roles: 'ADMIN',
      'X-USER-SITES': 'site-a,site-b',
    };
    const me = await call(thisFile.api.url, 'GET', '/api/directory/me', { token, headers: forged });
    expect(me.body).toEqual(expect.objectContaining({ id: 'vera', roles: ['VIEWER'], sites: ['site-a'] }));

    expectProblem(await call(thisFile.api.url, 'GET', '/api/directory/users', { token, headers: forged }), 403, 'FORBIDDEN');
  });

  test('forged X-User-* headers without a token do not make a user', async () => {
    const answer = await call(thisFile.api.url, 'GET', '/api/directory/users', { headers: { 'X-User-Id': 'root', 'X-User-Roles': 'ADMIN' } });
    expectProblem(answer, 401, 'UNAUTHENTICATED');
  });

  test('an ADMIN token reaches an admin endpoint', async () => {
    const token = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'], sites: [] });
    expect((await call(thisFile.api.url, 'GET', '/api/directory/users', { token })).status).toBe(200);
  });

  test('the internal token is not a user: a user endpoint refuses it with 403', async () => {
    expectProblem(await call(thisFile.api.url, 'GET', '/api/directory/me', { token: thisFile.platform.config.secrets.internalToken }), 403, 'FORBIDDEN');
  });
});

describe("with an identity provider's JWKS", () => {
  let jwksApi: RunningApi;
  let jwksServer: http.Server;
  let sign: (claims: Record<string, unknown>, build?: (jwt: SignJWT) => SignJWT) => Promise<string>;
  const ISSUER = 'https://idp.example.test/';
  const AUDIENCE = 'opsflow';

  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
    jwksServer = http.createServer((_request, response) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] })),
    );
    await new Promise<void>((resolve) => jwksServer.listen(0, '127.0.0.1', resolve));
    const config = loadConfig({
      ...thisFile.platform.env,
      JWT_JWKS_URL: `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks.json`,
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: AUDIENCE,
    });
    jwksApi = await thisFile.platform.startApi({ config });
    sign = (claims, build = (jwt) => jwt.setIssuer(ISSUER).setAudience(AUDIENCE).setExpirationTime('10m')) =>
      build(new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'k1' })).sign(privateKey);
  });

  afterAll(async () => {
    await jwksApi?.close();
    jwksServer?.close();
  });

  test("a token signed by the provider's key, for this issuer and audience, with exp -> 200", async () => {
    const answer = await call(jwksApi.url, 'GET', '/api/directory/me', { token: await sign({ ...viewer }) });
    expect(answer.status).toBe(200);
    expect(answer.body.id).toBe('vera');
  });

  test('without exp, for another audience or from another issuer -> 401', async () => {
    const noExp = await sign({ ...viewer }, (jwt) => jwt.setIssuer(ISSUER).setAudience(AUDIENCE));
    const otherAudience = await sign({ ...viewer }, (jwt) => jwt.setIssuer(ISSUER).setAudience('another-app').setExpirationTime('10m'));
    const otherIssuer = await sign({ ...viewer }, (jwt) => jwt.setIssuer('https://evil.example.test/').setAudience(AUDIENCE).setExpirationTime('10m'));
    for (const token of [noExp, otherAudience, otherIssuer])
      expectProblem(await call(jwksApi.url, 'GET', '/api/directory/me', { token }), 401, 'UNAUTHENTICATED');
  });
});
