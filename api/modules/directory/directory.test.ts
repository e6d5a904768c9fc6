import { platformWithApi } from '../../../test/support/platform';
import { call, expectProblem } from '../../../test/support/http';

const thisFile = platformWithApi();
let admin: string;

beforeAll(async () => {
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'], sites: [] });
});

const newUser = (n: number, extra: Record<string, unknown> = {}) => ({
  email: `user${n}@example.test`,
  name: `User ${n}`,
  locale: n % 2 === 0 ? 'en' : 'ar',
  roles: ['EDITOR'],
  siteIds: ['site-a'],
  ...extra,
});

test('POST /api/directory/users creates a user and GET returns it', async () => {
  const created = await call(thisFile.api.url, 'POST', '/api/directory/users', { token: admin, body: newUser(1, { phone: '+97150000001' }) });
  expect(created.status).toBe(201);
  expect(created.body).toEqual(expect.objectContaining({ email: 'user1@example.test', locale: 'ar', phone: '+97150000001', siteIds: ['site-a'] }));
  const fetched = await call(thisFile.api.url, 'GET', `/api/directory/users/${created.body.id}`, { token: admin });
  expect(fetched.body).toEqual(created.body);
});

test('POST with an unknown field -> 400 VALIDATION_FAILED naming it, and nothing is written', async () => {
  const before = await thisFile.platform.db('directory.user').count({ n: '*' }).first();
  const answer = await call(thisFile.api.url, 'POST', '/api/directory/users', { token: admin, body: { ...newUser(2), isRoot: true } });
  expectProblem(answer, 400, 'VALIDATION_FAILED');
  expect(answer.body.errors).toEqual(expect.arrayContaining([{ path: 'body.isRoot', message: 'is not a known field' }]));
  const after = await thisFile.platform.db('directory.user').count({ n: '*' }).first();
  expect(after).toEqual(before);
});

test('POST with bad values reports every issue with its path', async () => {
  const answer = await call(thisFile.api.url, 'POST', '/api/directory/users', {
    token: admin,
    body: { email: 'not-an-email', name: '', roles: ['editor'], siteIds: ['site-a'], phone: '0501234' },
  });
  expectProblem(answer, 400, 'VALIDATION_FAILED');
  const paths = answer.body.errors.map((e: { path: string }) => e.path);
  expect(paths).toEqual(expect.arrayContaining(['body.email', 'body.name', 'body.roles.0', 'body.phone']));
});

test('POST with a body that is not JSON -> 415; malformed JSON -> 400', async () => {
  const form = await call(thisFile.api.url, 'POST', '/api/directory/users', {
    token: admin,
    raw: 'email=x',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  expectProblem(form, 415, 'UNSUPPORTED_MEDIA_TYPE');
  const broken = await call(thisFile.api.url, 'POST', '/api/directory/users', {
    token: admin,
    raw: '{"email": ',
    headers: { 'content-type': 'application/json' },
  });
  expectProblem(broken, 400, 'BAD_REQUEST');
});

test('a second user with the same email -> 409 USER_EMAIL_TAKEN', async () => {
  await call(thisFile.api.url, 'POST', '/api/directory/users', { token: admin, body: newUser(3) });
  expectProblem(await call(thisFile.api.url, 'POST', '/api/directory/users', { token: admin, body: newUser(3) }), 409, 'USER_EMAIL_TAKEN');
});

test('PUT changes only the fields sent; DELETE removes; both 404 for an unknown id', async () => {
  const created = await call(thisFile.api.url, 'POST', '/api/directory/users', { token: admin, body: newUser(4) });
  const changed = await call(thisFile.api.url, 'PUT', `/api/directory/users/${created.body.id}`, { token: admin, body: { roles: ['MANAGER'] } });
  expect(changed.body).toEqual(expect.objectContaining({ email: 'user4@example.test', roles: ['MANAGER'] }));
  expect((await call(thisFile.api.url, 'DELETE', `/api/directory/users/${created.body.id}`, { token: admin })).status).toBe(204);
  expectProblem(await call(thisFile.api.url, 'GET', `/api/directory/users/${created.body.id}`, { token: admin }), 404, 'NOT_FOUND');
  expectProblem(await call(thisFile.api.url, 'DELETE', `/api/directory/users/${created.body.id}`, { token: admin }), 404, 'NOT_FOUND');
  expectProblem(await call(thisFile.api.url, 'GET', '/api/directory/users/not-a-uuid', { token: admin }), 400, 'VALIDATION_FAILED');
});

test('GET /api/directory/users pages newest first with a cursor and filters by site and role', async () => {
  for (let n = 10; n < 17; n++) {
    await call(thisFile.api.url, 'POST', '/api/directory/users', {
      token: admin,
      body: newUser(n, { siteIds: ['site-paged'], roles: n % 2 ? ['VIEWER'] : ['EDITOR'] }),
    });
  }
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `?siteId=site-paged&limit=3${cursor ? `&cursor=${cursor}` : ''}`;
    const page = await call(thisFile.api.url, 'GET', `/api/directory/users${query}`, { token: admin });
    expect(page.status).toBe(200);
    expect(page.body.items.length).toBeLessThanOrEqual(3);
    seen.push(...page.body.items.map((u: { email: string }) => u.email));
    cursor = page.body.nextCursor;
  } while (cursor);
  expect(seen).toEqual([16, 15, 14, 13, 12, 11, 10].map((n) => `user${n}@example.test`));

  const viewers = await call(thisFile.api.url, 'GET', '/api/directory/users?siteId=site-paged&role=VIEWER', { token: admin });
  expect(viewers.body.items.map((u: { email: string }) => u.email)).toEqual([15, 13, 11].map((n) => `user${n}@example.test`));
});

test('limit outside 1..500 and a forged cursor -> 400', async () => {
  expectProblem(await call(thisFile.api.url, 'GET', '/api/directory/users?limit=0', { token: admin }), 400, 'VALIDATION_FAILED');
  expectProblem(await call(thisFile.api.url, 'GET', '/api/directory/users?limit=501', { token: admin }), 400, 'VALIDATION_FAILED');
  expectProblem(await call(thisFile.api.url, 'GET', '/api/directory/users?cursor=bm9wZQ', { token: admin }), 400, 'INVALID_CURSOR');
});

test('a NUL character in any text (a body field, an array item, a query) -> 400 VALIDATION_FAILED naming it, and nothing stored', async () => {
  const before = await thisFile.platform.db('directory.user').count({ n: '*' }).first();
  const named = await call(thisFile.api.url, 'POST', '/api/directory/users', { token: admin, body: newUser(90, { name: 'N\u0000ul' }) });
  expectProblem(named, 400, 'VALIDATION_FAILED');
  expect(named.body.errors).toEqual([{ path: 'body.name', message: 'must not contain a NUL character' }]);
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/directory/users', { token: admin, body: newUser(91, { siteIds: ['site-a', 's\u0000'] }) }),
    400,
    'VALIDATION_FAILED',
  );
  expectProblem(await call(thisFile.api.url, 'GET', '/api/directory/users?siteId=a%00b', { token: admin }), 400, 'VALIDATION_FAILED');
  expect(await thisFile.platform.db('directory.user').count({ n: '*' }).first()).toEqual(before);
});
