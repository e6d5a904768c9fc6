import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { platformWithApi } from '../../../test/support/platform';
import { call, expectProblem, HttpAnswer } from '../../../test/support/http';
import { stagingFile } from '../../../data/archival/staging-files';

const thisFile = platformWithApi();
const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

async function upload(args: { csv: string; siteId?: string; fileName?: string; sha?: string; token?: string }): Promise<HttpAnswer> {
  const form = new FormData();
  form.set('siteId', args.siteId ?? 'site-a');
  form.set('logType', 'EMAIL_LOG');
  form.set('fileName', args.fileName ?? 'email_log_20261020T020000Z_001.csv');
  form.set('rowCount', '2');
  form.set('sha256', args.sha ?? sha256(args.csv));
  form.set('file', new Blob([args.csv], { type: 'text/csv' }), 'x.csv');
  const answer = await fetch(`${thisFile.api.url}/api/assets/internal/archive`, {
    method: 'POST',
    headers: { authorization: `Bearer ${args.token ?? thisFile.platform.config.secrets.internalToken}` },
    body: form,
  });
  const text = await answer.text();
  return { status: answer.status, headers: answer.headers, body: JSON.parse(text), text };
}

const CSV = 'id,site_id\n1,site-a\n2,site-a\n';

test('the internal sink stores a CSV as a published asset in /archive and answers 201', async () => {
  const answer = await upload({ csv: CSV });
  expect(answer.status).toBe(201);
  expect(answer.body).toEqual({
    assetId: expect.any(String),
    siteId: 'site-a',
    folder: '/archive',
    fileName: 'email_log_20261020T020000Z_001.csv',
    sizeBytes: Buffer.byteLength(CSV),
    sha256: sha256(CSV),
  });
  const row = await thisFile.platform.db('assets.asset').where({ id: answer.body.assetId }).first();
  expect(row).toEqual(expect.objectContaining({ status: 'PUBLISHED', folder: '/archive' }));
  // Published on arrival, as its first revision; the audit has both the creation and the publish.
  const revisions = await thisFile.platform.db('assets.asset_aud').where({ id: row.id }).orderBy('rev').select('rev', 'revtype', 'status');
  expect(revisions).toEqual([
    { rev: row.published_rev, revtype: 0, status: 'DRAFT' },
    { rev: expect.any(Number), revtype: 1, status: 'PUBLISHED' },
  ]);
});

test('the same file again (site, name, sha256) -> 200 with the same asset, stored once', async () => {
  const csv = 'id\n42\n';
  const first = await upload({ csv, fileName: 'email_log_20261021T020000Z_001.csv' });
  const second = await upload({ csv, fileName: 'email_log_20261021T020000Z_001.csv' });
  expect([first.status, second.status]).toEqual([201, 200]);
  expect(second.body.assetId).toBe(first.body.assetId);
  expect(
    await thisFile.platform
      .db('assets.asset')
      .where({ sha256: sha256(csv) })
      .count({ n: '*' })
      .first(),
  ).toEqual({ n: 1 });
});

test('bytes that do not hash to the sha256 sent -> 400 CHECKSUM_MISMATCH and nothing stored', async () => {
  const answer = await upload({ csv: CSV, fileName: 'email_log_20261022T020000Z_001.csv', sha: sha256('something else') });
  expectProblem(answer, 400, 'CHECKSUM_MISMATCH');
  expect(await thisFile.platform.db('assets.asset').where({ name: 'email_log_20261022T020000Z_001.csv' }).first()).toBeUndefined();
});

test('the sink takes only the internal token: a user token -> 403, an ADMIN one included; none -> 401', async () => {
  const adminToken = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  expectProblem(await upload({ csv: CSV, token: adminToken }), 403, 'FORBIDDEN');
  const noToken = await fetch(`${thisFile.api.url}/api/assets/internal/archive`, { method: 'POST' });
  expect(noToken.status).toBe(401);
  expect(((await noToken.json()) as { code: string }).code).toBe('UNAUTHENTICATED');
});

test('list, download and delete follow site membership and roles; an archive file is deleted by an ADMIN only', async () => {
  const csv = 'id,name\n7,"quoted, value"\n';
  const stored = await upload({ csv, siteId: 'site-b', fileName: 'email_log_20261023T020000Z_001.csv' });
  const member = await thisFile.platform.token({ sub: 'vic', roles: ['VIEWER'], sites: ['site-b'] });
  const outsider = await thisFile.platform.token({ sub: 'oz', roles: ['EDITOR'], sites: ['site-z'] });
  const editor = await thisFile.platform.token({ sub: 'eve', roles: ['EDITOR'], sites: ['site-b'] });

  const list = await call(thisFile.api.url, 'GET', '/api/assets?siteId=site-b&folder=/archive', { token: member });
  expect(list.body.items.map((a: { id: string }) => a.id)).toEqual([stored.body.assetId]);
  expectProblem(await call(thisFile.api.url, 'GET', '/api/assets?siteId=site-b', { token: outsider }), 403, 'FORBIDDEN');

  const download = await fetch(`${thisFile.api.url}/api/assets/${stored.body.assetId}/download`, { headers: { authorization: `Bearer ${member}` } });
  expect(download.status).toBe(200);
  expect(download.headers.get('content-type')).toContain('text/csv');
  expect(download.headers.get('content-disposition')).toContain('attachment; filename="email_log_20261023T020000Z_001.csv"');
  expect(await download.text()).toBe(csv);

  expectProblem(await call(thisFile.api.url, 'DELETE', `/api/assets/${stored.body.assetId}`, { token: member }), 403, 'FORBIDDEN');
  expectProblem(await call(thisFile.api.url, 'DELETE', `/api/assets/${stored.body.assetId}`, { token: outsider }), 403, 'FORBIDDEN');
  // An archive file may be the only copy of its rows: its site's EDITOR may not delete it, an ADMIN may.
  expectProblem(await call(thisFile.api.url, 'DELETE', `/api/assets/${stored.body.assetId}`, { token: editor }), 403, 'ARCHIVE_READ_ONLY');
  const admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  expect((await call(thisFile.api.url, 'DELETE', `/api/assets/${stored.body.assetId}`, { token: admin })).status).toBe(204);
  expectProblem(await call(thisFile.api.url, 'GET', `/api/assets/${stored.body.assetId}/download`, { token: member }), 404, 'NOT_FOUND');
  // Stored straight through the sink, without an archive run: the audit row names no run.
  expect(await thisFile.platform.db('assets.archive_deletion').where({ asset_id: stored.body.assetId }).select('deleted_by', 'run_id', 'row_count')).toEqual([
    { deleted_by: 'ada', run_id: null, row_count: null },
  ]);
});

test("an upload over the site's storage quota -> 413 QUOTA_EXCEEDED: no asset, no file; archive files do not count against it", async () => {
  const quota = 1000;
  const limited = await thisFile.platform.startApi({
    config: { ...thisFile.platform.config, limits: { ...thisFile.platform.config.limits, assetQuotaBytesPerSite: quota } },
  });
  const editor = await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-q'] });
  const put = (bytes: number, name: string) => {
    const form = new FormData();
    form.set('siteId', 'site-q');
    form.set('folder', '/docs');
    form.set('file', new Blob([crypto.randomBytes(bytes)], { type: 'application/octet-stream' }), name);
    return fetch(`${limited.url}/api/assets`, { method: 'POST', headers: { authorization: `Bearer ${editor}` }, body: form }).then(async (answer) => ({
      status: answer.status,
      body: (await answer.json()) as { code?: string },
    }));
  };
  // Archive files are the platform's records of pruned rows: they never block a run.
  expect((await upload({ csv: 'x'.repeat(2000), siteId: 'site-q', fileName: 'email_log_big.csv' })).status).toBe(201);
  expect((await put(600, 'first.bin')).status).toBe(201);
  const rowsBefore = await thisFile.platform.db('assets.asset').where({ site_id: 'site-q' }).count({ n: '*' }).first();
  const storedFiles = () => fs.readdirSync(path.join(thisFile.platform.config.dataDir, 'assets'), { recursive: true }).length;
  const filesBefore = storedFiles();
  const over = await put(500, 'second.bin');
  expect(over).toEqual({ status: 413, body: expect.objectContaining({ code: 'QUOTA_EXCEEDED' }) });
  expect(await thisFile.platform.db('assets.asset').where({ site_id: 'site-q' }).count({ n: '*' }).first()).toEqual(rowsBefore);
  expect(storedFiles()).toBe(filesBefore);
  expect((await put(400, 'fits.bin')).status).toBe(201);
});

/** A part as an export records it, its CSV staged in the data folder the API shares with the workers. */
async function stagedPart(csv: string, fileName: string): Promise<{ id: string; file: string }> {
  const id = crypto.randomUUID();
  await thisFile.platform.db('settings.archive_part').insert({
    id,
    workflow_id: 'archive-test',
    run_id: crypto.randomUUID(),
    log_type: 'EMAIL_LOG',
    site_id: 'site-c',
    cutoff: new Date(),
    part_no: 1,
    file_name: fileName,
    row_count: 2,
    min_id: 1,
    max_id: 2,
    size_bytes: Buffer.byteLength(csv),
    sha256: sha256(csv),
    state: 'EXPORTED',
    format: 'csv',
  });
  const file = stagingFile(thisFile.platform.config.dataDir, id, 'csv');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, csv);
  return { id, file };
}

const handOver = (body: unknown, token = thisFile.platform.config.secrets.internalToken) =>
  call(thisFile.api.url, 'POST', '/api/assets/internal/archive-staged', { token, body });

test('a staged part is stored by the API from the data folder it shares, named by its part alone: no bytes sent, the file verified against the manifest, the staged file kept for a retry; a second call answers the same asset', async () => {
  const csv = 'id,site_id\n1,site-c\n2,site-c\n';
  const part = await stagedPart(csv, 'email_log_20261101T020000Z_001.csv');
  const stored = await handOver({ partId: part.id });
  expect(stored.status).toBe(201);
  expect(stored.body).toEqual(
    expect.objectContaining({ siteId: 'site-c', folder: '/archive', fileName: 'email_log_20261101T020000Z_001.csv', sha256: sha256(csv) }),
  );
  // Stored through a link of its own: the staged file stays for a retry until the part's rows are gone, and no link is left.
  expect(fs.readFileSync(part.file, 'utf8')).toBe(csv);
  expect(fs.readdirSync(path.dirname(part.file)).filter((name) => name.startsWith(part.id))).toEqual([path.basename(part.file)]);
  const reader = await thisFile.platform.token({ sub: 'vic', roles: ['VIEWER'], sites: ['site-c'] });
  const download = await fetch(`${thisFile.api.url}/api/assets/${stored.body.assetId}/download`, { headers: { authorization: `Bearer ${reader}` } });
  expect(await download.text()).toBe(csv);
  const again = await handOver({ partId: part.id });
  expect([again.status, again.body.assetId]).toEqual([200, stored.body.assetId]);
});

test('the hand-over refuses: bytes that differ from the manifest (400 CHECKSUM_MISMATCH, nothing stored), a symlink at the staged name (409, not followed), a part with nothing staged (404 ARCHIVE_PART_NOT_STAGED), an unknown part, a path for a part id, and any token but the internal one', async () => {
  const csv = 'id,site_id\n3,site-c\n4,site-c\n';
  const changed = await stagedPart(csv, 'email_log_20261102T020000Z_001.csv');
  fs.writeFileSync(changed.file, csv.replace('4', '5'));
  expectProblem(await handOver({ partId: changed.id }), 400, 'CHECKSUM_MISMATCH');
  expect(fs.readdirSync(path.dirname(changed.file)).filter((name) => name.startsWith(changed.id))).toEqual([path.basename(changed.file)]);
  expect(await thisFile.platform.db('assets.asset').where({ name: 'email_log_20261102T020000Z_001.csv' })).toEqual([]);

  // A symlink planted at a staged name is not followed into the store.
  fs.rmSync(changed.file);
  fs.symlinkSync('/etc/hostname', changed.file);
  expectProblem(await handOver({ partId: changed.id }), 409, 'CONFLICT');
  expect(fs.readdirSync(path.dirname(changed.file)).filter((name) => name.startsWith(changed.id))).toEqual([path.basename(changed.file)]);
  expect(await thisFile.platform.db('assets.asset').where({ name: 'email_log_20261102T020000Z_001.csv' })).toEqual([]);

  fs.rmSync(changed.file);
  expectProblem(await handOver({ partId: changed.id }), 404, 'ARCHIVE_PART_NOT_STAGED');
  expectProblem(await handOver({ partId: crypto.randomUUID() }), 404, 'NOT_FOUND');
  expectProblem(await handOver({ partId: '../../../etc/passwd' }), 400, 'VALIDATION_FAILED');
  expectProblem(await handOver({ partId: changed.id, file: '/etc/passwd' }), 400, 'VALIDATION_FAILED');
  const admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  const other = await stagedPart('id,site_id\n6,site-c\n7,site-c\n', 'email_log_20261103T020000Z_001.csv');
  expectProblem(await handOver({ partId: other.id }, admin), 403, 'FORBIDDEN');
  expect(fs.existsSync(other.file)).toBe(true);
});
