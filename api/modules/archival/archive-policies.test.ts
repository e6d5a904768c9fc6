import { platformWithApi } from '../../../test/support/platform';
import { call, expectProblem } from '../../../test/support/http';

const thisFile = platformWithApi();
let admin: string;
let editor: string;

beforeAll(async () => {
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  editor = await thisFile.platform.token({ sub: 'ed', roles: ['EDITOR', 'MANAGER'], sites: ['site-a'] });
});

const create = (body: unknown, token = admin) => call(thisFile.api.url, 'POST', '/api/settings/archive-policies', { token, body });

test('POST creates a site policy and a global one; GET lists and filters them', async () => {
  const site = await create({ logType: 'EMAIL_LOG', siteId: 'site-a', retentionDays: 30, enabled: true });
  expect(site.status).toBe(201);
  expect(site.body).toEqual(expect.objectContaining({ logType: 'EMAIL_LOG', siteId: 'site-a', retentionDays: 30, enabled: true }));
  const global = await create({ logType: 'EMAIL_LOG', siteId: null, retentionDays: 90, enabled: true });
  expect(global.status).toBe(201);

  const globals = await call(thisFile.api.url, 'GET', '/api/settings/archive-policies?siteId=global', { token: admin });
  expect(globals.body.items.map((p: { id: string }) => p.id)).toEqual([global.body.id]);
  const ofSite = await call(thisFile.api.url, 'GET', '/api/settings/archive-policies?siteId=site-a&logType=EMAIL_LOG', { token: admin });
  expect(ofSite.body.items.map((p: { id: string }) => p.id)).toEqual([site.body.id]);
});

test.each([
  ['0', 0],
  ['3651', 3651],
  ['a fraction', 30.5],
  ['a string', '30'],
])('retentionDays %s -> 400 VALIDATION_FAILED, nothing written', async (_name, retentionDays) => {
  const before = await thisFile.platform.db('settings.archive_policy').count({ n: '*' }).first();
  const answer = await create({ logType: 'SCHEDULER_JOB_LOG', siteId: 'site-x', retentionDays, enabled: true });
  expectProblem(answer, 400, 'VALIDATION_FAILED');
  expect(answer.body.errors.map((e: { path: string }) => e.path)).toContain('body.retentionDays');
  expect(await thisFile.platform.db('settings.archive_policy').count({ n: '*' }).first()).toEqual(before);
});

test('a duplicate (log type, site) -> 409 ARCHIVE_POLICY_EXISTS, global duplicates included', async () => {
  expect((await create({ logType: 'INTEGRATION_LOG', siteId: 'site-d', retentionDays: 10, enabled: true })).status).toBe(201);
  expectProblem(await create({ logType: 'INTEGRATION_LOG', siteId: 'site-d', retentionDays: 11, enabled: false }), 409, 'ARCHIVE_POLICY_EXISTS');
  expect((await create({ logType: 'INTEGRATION_LOG', siteId: null, retentionDays: 10, enabled: true })).status).toBe(201);
  expectProblem(await create({ logType: 'INTEGRATION_LOG', siteId: null, retentionDays: 12, enabled: true }), 409, 'ARCHIVE_POLICY_EXISTS');
});

test('PUT changes retention and enabled; unknown fields -> 400; DELETE -> 204 then 404', async () => {
  const created = await create({ logType: 'SCHEDULER_JOB_LOG', siteId: 'site-p', retentionDays: 5, enabled: true });
  const path = `/api/settings/archive-policies/${created.body.id}`;
  const changed = await call(thisFile.api.url, 'PUT', path, { token: admin, body: { retentionDays: 7, enabled: false } });
  expect(changed.body).toEqual(expect.objectContaining({ retentionDays: 7, enabled: false, siteId: 'site-p' }));
  expectProblem(
    await call(thisFile.api.url, 'PUT', path, { token: admin, body: { retentionDays: 7, enabled: false, siteId: 'other' } }),
    400,
    'VALIDATION_FAILED',
  );
  expect((await call(thisFile.api.url, 'GET', path, { token: admin })).body.retentionDays).toBe(7);
  expect((await call(thisFile.api.url, 'DELETE', path, { token: admin })).status).toBe(204);
  expectProblem(await call(thisFile.api.url, 'GET', path, { token: admin }), 404, 'NOT_FOUND');
});

test('resolve: the site policy (even disabled), else the global one, else NONE', async () => {
  await create({ logType: 'SCHEDULER_JOB_LOG', siteId: null, retentionDays: 60, enabled: true });
  await create({ logType: 'SCHEDULER_JOB_LOG', siteId: 'site-off', retentionDays: 15, enabled: false });
  const resolve = (logType: string, siteId: string, token = admin) =>
    call(thisFile.api.url, 'GET', `/api/settings/archive-policies/resolve?logType=${logType}&siteId=${siteId}`, { token });

  expect((await resolve('SCHEDULER_JOB_LOG', 'site-off')).body).toEqual({ enabled: false, retentionDays: 15, source: 'SITE' });
  expect((await resolve('SCHEDULER_JOB_LOG', 'site-new')).body).toEqual({ enabled: true, retentionDays: 60, source: 'GLOBAL' });
  expect((await resolve('EMAIL_LOG', 'site-none-here', thisFile.platform.config.secrets.internalToken)).body).toEqual({
    enabled: true,
    retentionDays: 90,
    source: 'GLOBAL',
  });
  await thisFile.platform.db('settings.archive_policy').where({ log_type: 'EMAIL_LOG' }).delete();
  expect((await resolve('EMAIL_LOG', 'site-a')).body).toEqual({ enabled: false, retentionDays: null, source: 'NONE' });
  expectProblem(await resolve('EMAIL_LOG', 'site-a', editor), 403, 'FORBIDDEN');
});

test('policies and runs are for ADMIN only', async () => {
  expectProblem(await create({ logType: 'EMAIL_LOG', siteId: 'site-a', retentionDays: 30, enabled: true }, editor), 403, 'FORBIDDEN');
  expectProblem(await call(thisFile.api.url, 'POST', '/api/settings/archive-policies/run', { token: editor, body: {} }), 403, 'FORBIDDEN');
  expectProblem(await call(thisFile.api.url, 'POST', '/api/settings/archive-policies/run', { body: {} }), 401, 'UNAUTHENTICATED');
});
