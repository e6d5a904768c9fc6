import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { platformWithApi } from '../support/platform';
import { recordHistory } from '../support/histories';
import { call, expectProblem } from '../support/http';
import { archiveOutcome, globalRetention } from './harness';
import { seedEmailLogs } from './seed';
import { rejectionOf } from '../support/failures';
import { ensureLogPartitions } from '../../data/archival/log-partitions';
import { DuckDBInstance } from '@duckdb/node-api';

const thisFile = platformWithApi();
let admin: string;

beforeAll(async () => {
  await thisFile.platform.startWorker(['archival'], { API_INTERNAL_URL: thisFile.api.url });
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  await globalRetention(thisFile.api.url, admin, 'EMAIL_LOG');
});

/** Every row of a site, as PostgreSQL prints it: value for value, ids included. */
async function rowsOf(siteId: string): Promise<string[]> {
  const result = await thisFile.platform.db.raw('select t::text as row from email.email_log t where site_id = ? order by id', [siteId]);
  return result.rows.map((r: { row: string }) => r.row);
}

/** Archives one site's EMAIL_LOG rows and answers the asset of its file. */
async function archiveSite(siteId: string): Promise<string> {
  const started = await call(thisFile.api.url, 'POST', '/api/settings/archive-policies/run', { token: admin, body: { logType: 'EMAIL_LOG', siteId } });
  expect(started.status).toBe(202);
  const outcome = await archiveOutcome(thisFile.platform, started.body.runs[0].workflowId, started.body.runs[0].runId);
  const site = outcome.sites.find((s) => s.siteId === siteId)!;
  expect(site.state).toBe('DONE');
  return site.assetId!;
}

async function restore(assetId: string) {
  const started = await call(thisFile.api.url, 'POST', '/api/settings/archive-restores', { token: admin, body: { assetId } });
  expect(started.status).toBe(202);
  expect(started.body).toEqual({
    workflowId: `archive-restore:${assetId}`,
    runId: expect.any(String),
    uiUrl: expect.stringContaining(`/workflows/${encodeURIComponent(`archive-restore:${assetId}`)}/`),
  });
  const failure = await rejectionOf(thisFile.platform.temporal.client.workflow.getHandle(started.body.workflowId, started.body.runId).result());
  const report = await call(thisFile.api.url, 'GET', `/api/settings/archive-restores/${started.body.workflowId}`, { token: admin });
  expect(report.status).toBe(200);
  return { runId: started.body.runId as string, report: report.body, failure };
}

test('archive, then restore: the table is value for value what it was, ids kept; a second restore inserts nothing; the file stays', async () => {
  await seedEmailLogs(thisFile.platform.db, { siteId: 'site-r', count: 5, ageDays: 60 });
  await ensureLogPartitions(thisFile.platform.db, { logType: 'EMAIL_LOG', from: new Date('2025-03-01T00:00:00Z'), to: new Date('2025-03-01T00:00:00Z') });
  await thisFile.platform.db('email.email_log').insert({
    site_id: 'site-r',
    created_at: thisFile.platform.db.raw("'2025-03-04 05:06:07.123456+00'::timestamptz"),
    updated_at: thisFile.platform.db.raw("'2025-03-04 05:06:07.000001+02'::timestamptz"),
    recipient: '"quoted", <q@example.test>',
    subject: 'commas, "quotes", and\nnew lines — مرحبا',
    error: '',
    status: 'FAILED',
    attempts: 3,
    missing_variables: JSON.stringify(['a.b']),
    variables: JSON.stringify({ name: 'Zoë', list: [1, null, true] }),
  });
  const before = await rowsOf('site-r');
  expect(before).toHaveLength(6);

  const assetId = await archiveSite('site-r');
  expect(await rowsOf('site-r')).toEqual([]);

  const first = await restore(assetId);
  expect(first.failure).toBeNull();
  await recordHistory(thisFile.platform.temporal, { workflowId: `archive-restore:${assetId}`, runId: first.runId, name: 'archive-restore-completed' });
  expect(first.report).toEqual(
    expect.objectContaining({
      status: 'COMPLETED',
      assetId,
      logType: 'EMAIL_LOG',
      siteId: 'site-r',
      fileName: expect.stringMatching(/^email_log_.*_001\.csv$/),
      rowsInFile: 6,
      rowsInserted: 6,
      rowsSkipped: 0,
      error: null,
      closedAt: expect.any(String),
    }),
  );
  expect(await rowsOf('site-r')).toEqual(before);

  const second = await restore(assetId);
  expect(second.report).toEqual(expect.objectContaining({ status: 'COMPLETED', rowsInFile: 6, rowsInserted: 0, rowsSkipped: 6 }));
  expect(await rowsOf('site-r')).toEqual(before);

  // The archive file is still there, and the job log has both restores under the file's site.
  const viewer = await thisFile.platform.token({ sub: 'v', roles: ['VIEWER'], sites: ['site-r'] });
  expect((await fetch(`${thisFile.api.url}/api/assets/${assetId}/download`, { headers: { authorization: `Bearer ${viewer}` } })).status).toBe(200);
  const logs = await call(thisFile.api.url, 'GET', '/api/settings/scheduler-job-logs?job=archive-restore&siteId=site-r', { token: admin });
  expect(logs.body.items.map((item: { status: string; rowsAffected: number }) => [item.status, item.rowsAffected])).toEqual([
    ['SUCCESS', 0],
    ['SUCCESS', 6],
  ]);
  expect(logs.body.items[1].message).toContain('6 rows inserted, 0 already present');
});

/** Where the file sink keeps an asset's bytes. */
const storedFile = (storageKey: string) => path.join(thisFile.platform.config.dataDir, 'assets', storageKey.slice(0, 2), storageKey.slice(2, 4), storageKey);

test('a site whose policy says parquet is archived as Parquet with zstd, passes the sha256 gate, and restores value for value: NULL and "", Arabic, new lines, timestamps with their offsets', async () => {
  const created = await call(thisFile.api.url, 'POST', '/api/settings/archive-policies', {
    token: admin,
    body: { logType: 'EMAIL_LOG', siteId: 'site-pq', retentionDays: 30, enabled: true, format: 'parquet' },
  });
  expect(created.status).toBe(201);
  expect(created.body.format).toBe('parquet');
  await seedEmailLogs(thisFile.platform.db, { siteId: 'site-pq', count: 3, ageDays: 60 });
  await ensureLogPartitions(thisFile.platform.db, { logType: 'EMAIL_LOG', from: new Date('2025-03-01T00:00:00Z'), to: new Date('2025-03-01T00:00:00Z') });
  const db = thisFile.platform.db;
  await db('email.email_log').insert([
    {
      site_id: 'site-pq',
      created_at: db.raw("'2025-03-04 05:06:07.123456+00'::timestamptz"),
      updated_at: db.raw("'2025-03-04 05:06:07.000001+02'::timestamptz"),
      recipient: '"quoted", <q@example.test>',
      subject: 'سطر أول\r\nسطر ثان, "مقتبس" — مرحبا',
      error: '',
      status: 'FAILED',
      attempts: 3,
      missing_variables: JSON.stringify(['a.b']),
      variables: JSON.stringify({ name: 'زينب', list: [1, null, true] }),
    },
    {
      site_id: 'site-pq',
      created_at: db.raw("'2025-03-05 23:59:59.999999-05'::timestamptz"),
      updated_at: db.raw("'2025-03-05 00:00:00+00'::timestamptz"),
      recipient: 'r@example.test',
      subject: '',
      error: null,
      status: 'SUCCESS',
      attempts: 1,
    },
  ]);
  const before = await rowsOf('site-pq');
  expect(before).toHaveLength(5);

  const assetId = await archiveSite('site-pq');
  expect(await rowsOf('site-pq')).toEqual([]);
  const asset = await db('assets.asset').where({ id: assetId }).first();
  expect(asset.name).toMatch(/^email_log_.*_001\.parquet$/);
  expect(asset.content_type).toBe('application/vnd.apache.parquet');
  const part = await db('settings.archive_part').where({ asset_id: assetId }).first();
  expect(part.format).toBe('parquet');
  // The gate is the Parquet file's own sha256: the manifest's, the asset's, and the stored bytes' agree.
  const bytes = fs.readFileSync(storedFile(asset.storage_key));
  expect(bytes.subarray(0, 4).toString()).toBe('PAR1');
  expect([part.sha256, asset.sha256]).toEqual([
    crypto.createHash('sha256').update(bytes).digest('hex'),
    crypto.createHash('sha256').update(bytes).digest('hex'),
  ]);
  const duck = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  const connection = await duck.connect();
  const file = storedFile(asset.storage_key);
  const compression = await connection.runAndReadAll(`select distinct compression from parquet_metadata('${file}')`);
  const counted = await connection.runAndReadAll(`select count(*)::integer as n from read_parquet('${file}')`);
  connection.closeSync();
  duck.closeSync();
  expect(compression.getRowObjects()).toEqual([{ compression: 'ZSTD' }]);
  expect(counted.getRowObjects()).toEqual([{ n: 5 }]);

  const restored = await restore(assetId);
  expect(restored.failure).toBeNull();
  expect(restored.report).toEqual(expect.objectContaining({ status: 'COMPLETED', fileName: asset.name, rowsInFile: 5, rowsInserted: 5 }));
  expect(await rowsOf('site-pq')).toEqual(before);
});

test('a part Parquet cannot take (a record past its 16 MiB line limit) is kept as CSV: archived, gated and restored all the same', async () => {
  const created = await call(thisFile.api.url, 'POST', '/api/settings/archive-policies', {
    token: admin,
    body: { logType: 'EMAIL_LOG', siteId: 'site-pq-wide', retentionDays: 30, enabled: true, format: 'parquet' },
  });
  expect(created.status).toBe(201);
  await seedEmailLogs(thisFile.platform.db, { siteId: 'site-pq-wide', count: 2, ageDays: 60 });
  await thisFile.platform.db.raw(
    `update email.email_log set subject = repeat('long line, ', 1700000) where site_id = 'site-pq-wide' and id = (select min(id) from email.email_log where site_id = 'site-pq-wide')`,
  );
  const before = await rowsOf('site-pq-wide');

  const assetId = await archiveSite('site-pq-wide');
  const asset = await thisFile.platform.db('assets.asset').where({ id: assetId }).first();
  expect(asset).toEqual(expect.objectContaining({ content_type: 'text/csv', name: expect.stringMatching(/_001\.csv$/) }));
  expect((await thisFile.platform.db('settings.archive_part').where({ asset_id: assetId }).first()).format).toBe('csv');
  expect(await rowsOf('site-pq-wide')).toEqual([]);
  expect((await restore(assetId)).report).toEqual(expect.objectContaining({ status: 'COMPLETED', rowsInserted: 2 }));
  expect(await rowsOf('site-pq-wide')).toEqual(before);
});

test('a file whose bytes no longer hash to its manifest is not loaded: the restore fails ARCHIVE_FILE_CORRUPT, nothing is inserted', async () => {
  await seedEmailLogs(thisFile.platform.db, { siteId: 'site-x', count: 3, ageDays: 60 });
  const assetId = await archiveSite('site-x');
  const asset = await thisFile.platform.db('assets.asset').where({ id: assetId }).first();
  const stored = path.join(thisFile.platform.config.dataDir, 'assets', asset.storage_key.slice(0, 2), asset.storage_key.slice(2, 4), asset.storage_key);
  const bytes = fs.readFileSync(stored);
  // One recipient changed on disk: the CSV still parses, and would load the wrong row.
  bytes[bytes.lastIndexOf('@')] = '#'.charCodeAt(0);
  fs.writeFileSync(stored, bytes);

  const { report, failure } = await restore(assetId);
  expect(report).toEqual(expect.objectContaining({ status: 'FAILED', rowsInserted: 0, error: expect.stringContaining('not to the') }));
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  expect(((failure as WorkflowFailedError).cause as ApplicationFailure).type).toBe('ARCHIVE_FILE_CORRUPT');
  expect(await rowsOf('site-x')).toEqual([]);
  const logs = await call(thisFile.api.url, 'GET', '/api/settings/scheduler-job-logs?job=archive-restore&outcome=FAILED', { token: admin });
  expect(logs.body.items).toEqual([expect.objectContaining({ siteId: 'site-x', rowsAffected: 0, message: expect.stringContaining('failed') })]);
});

test('refusals: not an ADMIN 403, an unknown asset 404, a file no archive run stored 409 NOT_AN_ARCHIVE_FILE, a bad body 400; none starts a run', async () => {
  const editor = await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-d'] });
  const form = new FormData();
  form.set('siteId', 'site-d');
  form.set('folder', '/docs');
  form.set('file', new Blob(['id,site_id\n1,site-d\n'], { type: 'text/csv' }), 'looks-like-a-log.csv');
  const uploaded = await fetch(`${thisFile.api.url}/api/assets`, { method: 'POST', headers: { authorization: `Bearer ${editor}` }, body: form });
  expect(uploaded.status).toBe(201);
  const { id } = (await uploaded.json()) as { id: string };

  expectProblem(await call(thisFile.api.url, 'POST', '/api/settings/archive-restores', { token: editor, body: { assetId: id } }), 403, 'FORBIDDEN');
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/settings/archive-restores', { token: admin, body: { assetId: '00000000-0000-4000-8000-000000000000' } }),
    404,
    'NOT_FOUND',
  );
  expectProblem(await call(thisFile.api.url, 'POST', '/api/settings/archive-restores', { token: admin, body: { assetId: id } }), 409, 'NOT_AN_ARCHIVE_FILE');
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/settings/archive-restores', { token: admin, body: { assetId: 'x; drop table' } }),
    400,
    'VALIDATION_FAILED',
  );
  expectProblem(
    await call(thisFile.api.url, 'GET', `/api/settings/archive-restores/archive-restore:${id}`, { token: admin }),
    404,
    'ARCHIVE_RESTORE_NOT_FOUND',
  );
});

test('the archive file read back for a restore is for the internal token only', async () => {
  const assetId = (await thisFile.platform.db('assets.asset').where({ folder: '/archive' }).first('id')).id;
  expectProblem(await call(thisFile.api.url, 'GET', `/api/assets/internal/archive/${assetId}`, { token: admin }), 403, 'FORBIDDEN');
  expectProblem(await call(thisFile.api.url, 'GET', `/api/assets/internal/archive/${assetId}`), 401, 'UNAUTHENTICATED');
});
