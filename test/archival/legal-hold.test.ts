import { attachPlatform, RunningApi, TestPlatform } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { archiveOutcome } from './harness';
import { seedEmailLogs } from './seed';

/**
 * Legal holds on archive files (spec: archival, third wave): a held file cannot be deleted by anyone, ADMIN
 * included, and each refusal is recorded on the hold; the database refuses the deletion of a held file's row
 * to a caller that skips the API too. Setting and releasing a hold are kept on its row for good.
 */
let platform: TestPlatform;
let api: RunningApi;
let admin: string;

beforeAll(async () => {
  platform = await attachPlatform();
  api = await platform.startApi();
  await platform.startWorker(['archival'], { API_INTERNAL_URL: api.url });
  admin = await platform.token({ sub: 'ada', name: 'Ada Admin', roles: ['ADMIN'] });
});

afterAll(async () => {
  await platform?.close();
});

/** Archives `count` old email-log rows of `siteId`; answers the ids of the site's archive files. */
async function archiveFilesOf(siteId: string, count = 3): Promise<string[]> {
  await call(api.url, 'POST', '/api/settings/archive-policies', { token: admin, body: { logType: 'EMAIL_LOG', siteId, retentionDays: 30, enabled: true } });
  await seedEmailLogs(platform.db, { siteId, count, ageDays: 45 });
  const started = await call(api.url, 'POST', '/api/settings/archive-policies/run', { token: admin, body: { logType: 'EMAIL_LOG', siteId } });
  expect(started.status).toBe(202);
  const [run] = started.body.runs;
  expect((await archiveOutcome(platform, run.workflowId, run.runId)).sites).toEqual(
    expect.arrayContaining([expect.objectContaining({ siteId, state: 'DONE' })]),
  );
  const files = await call(api.url, 'GET', `/api/assets?siteId=${siteId}&folder=/archive`, { token: admin });
  return files.body.items.map((item: { id: string }) => item.id);
}

const hold = (body: Record<string, unknown>, token = admin) => call(api.url, 'POST', '/api/settings/archive-holds', { token, body });
const release = (id: string, reason: string | null, token = admin) =>
  call(api.url, 'DELETE', `/api/settings/archive-holds/${id}${reason === null ? '' : `?reason=${encodeURIComponent(reason)}`}`, { token });
const deleteFile = (assetId: string, token = admin) => call(api.url, 'DELETE', `/api/assets/${assetId}`, { token });
const fileExists = async (assetId: string) => (await call(api.url, 'GET', `/api/assets/${assetId}`, { token: admin })).status === 200;

test('a held archive file is deleted by no one, ADMIN included; each refusal is on the hold; once released, an ADMIN deletes it', async () => {
  const [fileId] = await archiveFilesOf('site-held-file');
  const held = await hold({ assetId: fileId, reason: 'litigation 2026-117: keep every email log' });
  expect(held.status).toBe(201);
  expect(held.body).toEqual({
    id: expect.any(String),
    assetId: fileId,
    siteId: null,
    reason: 'litigation 2026-117: keep every email log',
    heldBy: { id: 'ada', name: 'Ada Admin' },
    heldAt: expect.any(String),
    released: null,
    refusals: [],
  });

  const otherAdmin = await platform.token({ sub: 'bob', name: 'Bob Admin', roles: ['ADMIN'] });
  expectProblem(await deleteFile(fileId), 409, 'ARCHIVE_HELD');
  expectProblem(await deleteFile(fileId, otherAdmin), 409, 'ARCHIVE_HELD');
  expect(await fileExists(fileId)).toBe(true);
  const refused = await call(api.url, 'GET', `/api/settings/archive-holds/${held.body.id}`, { token: admin });
  expect(refused.body.refusals).toEqual([
    { assetId: fileId, fileName: expect.stringMatching(/^email_log_.*\.csv$/), by: { id: 'bob', name: 'Bob Admin' }, at: expect.any(String) },
    { assetId: fileId, fileName: expect.stringMatching(/^email_log_.*\.csv$/), by: { id: 'ada', name: 'Ada Admin' }, at: expect.any(String) },
  ]);

  const released = await release(held.body.id, 'case closed');
  expect(released.status).toBe(200);
  expect(released.body.released).toEqual({ by: { id: 'ada', name: 'Ada Admin' }, at: expect.any(String), reason: 'case closed' });
  expectProblem(await release(held.body.id, 'again'), 409, 'ARCHIVE_HOLD_RELEASED');
  expect((await deleteFile(fileId)).status).toBe(204);
  expect(await platform.db('assets.archive_deletion').where({ asset_id: fileId })).toHaveLength(1);
});

test("a site's hold covers its archive files, those archived after it too; the database refuses a held file's deletion to a caller that skips the API, and keeps every hold as it was set", async () => {
  const site = 'site-held-whole';
  const [before] = await archiveFilesOf(site);
  const held = await hold({ siteId: site, reason: 'regulator inquiry' });
  expect(held.status).toBe(201);
  const after = (await archiveFilesOf(site, 2)).filter((id) => id !== before);
  expect(after).toHaveLength(1);
  for (const fileId of [before, after[0]]) expectProblem(await deleteFile(fileId), 409, 'ARCHIVE_HELD');

  // Past the API, with the platform's own database role: the row stays.
  await expect(platform.db('assets.asset').where({ id: before }).delete()).rejects.toMatchObject({ code: 'OFH01' });
  await expect(platform.db.raw(`delete from assets.asset where site_id = ? and folder = '/archive'`, [site])).rejects.toMatchObject({ code: 'OFH01' });
  // Nor moved out of the hold's reach (another site, another folder, other bytes) to be deleted after.
  for (const change of [{ site_id: 'site-unheld' }, { folder: '/reports' }, { storage_key: 'other-bytes', sha256: 'other-bytes' }])
    await expect(platform.db('assets.asset').where({ id: before }).update(change)).rejects.toMatchObject({ code: 'OFH01' });
  expect(await fileExists(before)).toBe(true);
  // A hold is a record: not deleted, not rewritten, even past the API; nor are the refusals it recorded.
  await expect(platform.db('settings.archive_hold').where({ id: held.body.id }).delete()).rejects.toMatchObject({ code: 'OFH02' });
  await expect(platform.db('settings.archive_hold').where({ id: held.body.id }).update({ reason: 'nothing' })).rejects.toMatchObject({ code: 'OFH02' });
  await expect(platform.db('settings.archive_hold').where({ id: held.body.id }).update({ site_id: 'elsewhere' })).rejects.toMatchObject({ code: 'OFH02' });

  await expect(platform.db('settings.archive_hold_refusal').where({ hold_id: held.body.id }).delete()).rejects.toMatchObject({ code: 'OFH02' });
  await expect(platform.db('settings.archive_hold_refusal').where({ hold_id: held.body.id }).update({ refused_by: 'nobody' })).rejects.toMatchObject({
    code: 'OFH02',
  });
  await expect(platform.db.raw('truncate settings.archive_hold_refusal')).rejects.toMatchObject({ code: 'OFH02' });

  const list = await call(api.url, 'GET', `/api/settings/archive-holds?siteId=${site}&state=OPEN`, { token: admin });
  expect(list.body.items.map((item: { id: string }) => item.id)).toEqual([held.body.id]);
  expect(list.body.items[0].refusals).toHaveLength(2);
  expect((await release(held.body.id, 'inquiry over')).status).toBe(200);
  await expect(platform.db('settings.archive_hold').where({ id: held.body.id }).update({ release_reason: 'rewritten' })).rejects.toMatchObject({
    code: 'OFH02',
  });
  expect((await deleteFile(before)).status).toBe(204);
});

test('holds are ADMIN only, and a hold the platform cannot set or release is refused with a problem and changes nothing', async () => {
  const [fileId] = await archiveFilesOf('site-hold-refusals', 1);
  const holdsBefore = await platform.db('settings.archive_hold').count({ n: '*' });
  const viewer = await platform.token({ sub: 'vic', roles: ['VIEWER'], sites: ['site-hold-refusals'] });
  const editor = await platform.token({ sub: 'eve', roles: ['EDITOR'], sites: ['site-hold-refusals'] });
  expectProblem(await hold({ assetId: fileId, reason: 'mine' }, editor), 403, 'FORBIDDEN');
  expectProblem(await call(api.url, 'GET', '/api/settings/archive-holds', { token: viewer }), 403, 'FORBIDDEN');

  expectProblem(await hold({ assetId: fileId, siteId: 'site-hold-refusals', reason: 'both' }), 400, 'VALIDATION_FAILED');
  expectProblem(await hold({ assetId: fileId }), 400, 'VALIDATION_FAILED');
  expectProblem(await hold({ assetId: fileId, reason: '' }), 400, 'VALIDATION_FAILED');
  expectProblem(await hold({ assetId: fileId, reason: 'x'.repeat(1001) }), 400, 'VALIDATION_FAILED');
  expectProblem(await hold({ siteId: '../etc', reason: 'hostile' }), 400, 'VALIDATION_FAILED');
  expectProblem(await hold({ assetId: '00000000-0000-4000-8000-000000000000', reason: 'none' }), 404, 'NOT_FOUND');
  const form = new FormData();
  form.set('siteId', 'site-hold-refusals');
  form.set('folder', '/reports');
  form.set('file', new Blob(['id\n1\n'], { type: 'text/csv' }), 'report.csv');
  const report = await fetch(`${api.url}/api/assets`, { method: 'POST', headers: { authorization: `Bearer ${editor}` }, body: form });
  const reportId = ((await report.json()) as { id: string }).id;
  expectProblem(await hold({ assetId: reportId, reason: 'not an archive' }), 409, 'NOT_AN_ARCHIVE_FILE');
  expect(await platform.db('settings.archive_hold').count({ n: '*' })).toEqual(holdsBefore);

  const held = await hold({ assetId: fileId, reason: 'kept' });
  expectProblem(await release(held.body.id, null), 400, 'VALIDATION_FAILED');
  expectProblem(await release(held.body.id, 'mine', editor), 403, 'FORBIDDEN');
  expectProblem(await release('00000000-0000-4000-8000-000000000000', 'none'), 404, 'ARCHIVE_HOLD_NOT_FOUND');
  expect((await call(api.url, 'GET', `/api/settings/archive-holds/${held.body.id}`, { token: admin })).body.released).toBeNull();
  // A file no hold covers is deleted as before.
  expect((await deleteFile(reportId, editor)).status).toBe(204);
});
