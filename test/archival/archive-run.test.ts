import { from as copyFrom } from 'pg-copy-streams';
import pg from 'pg';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { stagingFile } from '../../data/archival/staging-files';
import { attachPlatform, RunningApi, TestPlatform } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { recordHistory } from '../support/histories';
import { archiveOutcome, holdDeletes, sessionsWaitingOnLocks, startSinkProxy } from './harness';
import { waitUntil } from '../support/wait';
import { csvIds, remainingIds, seedEmailLogs } from './seed';
import { runFailure } from '../support/failures';
import { ensureLogPartitions } from '../../data/archival/log-partitions';
import { LogType } from '../../domain/archival';
import { fairShareOfRun } from '../support/fair-share';
import { PRIORITY } from '../../domain/fairness';

let platform: TestPlatform;
let api: RunningApi;
let proxy: Awaited<ReturnType<typeof startSinkProxy>>;
let admin: string;

beforeAll(async () => {
  platform = await attachPlatform();
  api = await platform.startApi();
  proxy = await startSinkProxy(api.url, platform.db);
  await platform.startWorker(['archival'], { API_INTERNAL_URL: proxy.url });
  admin = await platform.token({ sub: 'ada', roles: ['ADMIN'] });
});

afterAll(async () => {
  await platform?.close();
  await proxy?.close();
});

const policy = (siteId: string | null, retentionDays: number, enabled = true) =>
  call(api.url, 'POST', '/api/settings/archive-policies', { token: admin, body: { logType: 'EMAIL_LOG', siteId, retentionDays, enabled } });

async function runEmailArchive(body: Record<string, unknown> = {}) {
  const started = await call(api.url, 'POST', '/api/settings/archive-policies/run', { token: admin, body: { logType: 'EMAIL_LOG', ...body } });
  expect(started.status).toBe(202);
  const [run] = started.body.runs;
  expect(run).toEqual({
    logType: 'EMAIL_LOG',
    workflowId: 'archive:EMAIL_LOG',
    runId: expect.any(String),
    uiUrl: expect.stringContaining('/workflows/archive%3AEMAIL_LOG/'),
  });
  const outcome = await archiveOutcome(platform, run.workflowId, run.runId);
  const report = await call(api.url, 'GET', '/api/settings/archive-runs/archive:EMAIL_LOG', { token: admin });
  expect(report.status).toBe(200);
  return { outcome, report: report.body, runId: run.runId as string };
}

async function download(assetId: string, siteId: string): Promise<string> {
  const token = await platform.token({ sub: 'm', roles: ['VIEWER'], sites: [siteId] });
  const answer = await fetch(`${api.url}/api/assets/${assetId}/download`, { headers: { authorization: `Bearer ${token}` } });
  expect(answer.status).toBe(200);
  return answer.text();
}

test('per-site retention: a site policy, the global one, and a disabled site policy', async () => {
  await policy('site-a', 30);
  await policy(null, 90);
  await policy('site-c', 10, false);
  // Site c's rows (its policy disabled: never archived) stand at the times of the rows archived here, seeded
  // first so that a month starting between the two holds no old row alone. So no month holding old rows is
  // past retention for every site in it: they go by the row path on any date, not whole with their month
  // (which, with fixed ages, some days of each month would allow).
  const c = [
    ...(await seedEmailLogs(platform.db, { siteId: 'site-c', count: 3, ageDays: 40 })),
    ...(await seedEmailLogs(platform.db, { siteId: 'site-c', count: 2, ageDays: 100 })),
  ];
  const aOld = await seedEmailLogs(platform.db, { siteId: 'site-a', count: 3, ageDays: 40 });
  const aNew = await seedEmailLogs(platform.db, { siteId: 'site-a', count: 2, ageDays: 20 });
  const bOld = await seedEmailLogs(platform.db, { siteId: 'site-b', count: 2, ageDays: 100 });
  const bNew = await seedEmailLogs(platform.db, { siteId: 'site-b', count: 2, ageDays: 60 });

  const { report } = await runEmailArchive();

  expect(report.status).toBe('COMPLETED');
  await recordHistory(platform.temporal, { workflowId: 'archive:EMAIL_LOG', name: 'archive-run-three-sites' });
  const bySite = Object.fromEntries(report.sites.map((s: { siteId: string }) => [s.siteId, s]));
  expect(bySite['site-a']).toEqual(expect.objectContaining({ state: 'DONE', rowsExported: 3, rowsDeleted: 3, assetId: expect.any(String), error: null }));
  expect(bySite['site-b']).toEqual(expect.objectContaining({ state: 'DONE', rowsExported: 2, rowsDeleted: 2 }));
  expect(bySite['site-c']).toEqual(expect.objectContaining({ state: 'SKIPPED', rowsExported: 0, rowsDeleted: 0 }));
  expect(await remainingIds(platform.db, 'site-a')).toEqual(aNew);
  expect(await remainingIds(platform.db, 'site-b')).toEqual(bNew);
  expect(await remainingIds(platform.db, 'site-c')).toEqual(c);

  for (const [siteId, archived] of [
    ['site-a', aOld],
    ['site-b', bOld],
  ] as const) {
    const token = await platform.token({ sub: 'v', roles: ['VIEWER'], sites: [siteId] });
    const list = await call(api.url, 'GET', `/api/assets?siteId=${siteId}&folder=/archive`, { token });
    expect(list.body.items).toHaveLength(1);
    expect(list.body.items[0].name).toMatch(/^email_log_\d{8}T\d{6}Z_001\.csv$/);
    expect(list.body.items[0].id).toBe(bySite[siteId].assetId);
    expect(csvIds(await download(list.body.items[0].id, siteId))).toEqual(archived);
  }
  // Every site of the run has its job-log row: the archived ones with their counts, the skipped one with its reason.
  const jobLogs = await platform.db('settings.scheduler_job_log').where({ job_name: 'archive:EMAIL_LOG' }).orderBy('site_id');
  expect(jobLogs.map((row) => [row.site_id, row.status, Number(row.rows_affected), row.message])).toEqual([
    ['site-a', 'SUCCESS', 3, 'archived EMAIL_LOG: 3 rows exported, 3 deleted'],
    ['site-b', 'SUCCESS', 2, 'archived EMAIL_LOG: 2 rows exported, 2 deleted'],
    ['site-c', 'SKIPPED', 0, 'skipped EMAIL_LOG: the site retention policy is disabled'],
  ]);
  for (const row of jobLogs) expect(row.finished_at.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime());
});

test('round trip: the CSV loaded back with COPY equals the archived rows value for value', async () => {
  const tricky = [
    { recipient: 'plain@example.test', subject: null, error: '' },
    { recipient: '"quoted" <q@example.test>', subject: 'commas, "quotes", and\nnew lines\r\n', error: null },
    { recipient: 'ar@example.test', subject: 'مرحبا بكم — تقرير شهري', error: 'ünïcödé ✓ 😀' },
    { recipient: 'json@example.test', subject: '', error: 'x' },
  ];
  await ensureLogPartitions(platform.db, { logType: 'EMAIL_LOG', from: new Date('2025-01-01T00:00:00Z'), to: new Date('2025-01-01T00:00:00Z') });
  for (const [i, row] of tricky.entries()) {
    await platform.db('email.email_log').insert({
      site_id: 'site-r',
      created_at: platform.db.raw(`'2025-01-0${i + 1} 10:11:12.${123456 + i}+00'::timestamptz`),
      updated_at: platform.db.raw(`'2025-01-0${i + 1} 10:11:12.000001+02'::timestamptz`),
      recipient: row.recipient,
      subject: row.subject,
      error: row.error,
      status: 'FAILED',
      attempts: 3,
      missing_variables: JSON.stringify(['a.b', 'items.0.name']),
      variables: JSON.stringify({ name: 'Zoë', nested: { quote: '"', comma: ',', lines: 'a\nb', arabic: 'نص' }, list: [1, null, true] }),
    });
  }
  const before = (await platform.db.raw("select t::text as row from email.email_log t where site_id = 'site-r' order by id")).rows.map(
    (r: { row: string }) => r.row,
  );

  const { report } = await runEmailArchive({ siteId: 'site-r' });
  const site = report.sites.find((s: { siteId: string }) => s.siteId === 'site-r');
  expect(site).toEqual(expect.objectContaining({ state: 'DONE', rowsExported: 4, rowsDeleted: 4 }));
  const csv = await download(site.assetId, 'site-r');
  expect(csv.startsWith('id,site_id,created_at,updated_at,template_id,')).toBe(true);
  expect(csv.includes('\r\n') ? csv.split('\r\n').length : 0).toBeLessThanOrEqual(2);

  await platform.db.raw('create table email.email_log_roundtrip (like email.email_log)');
  const client = new pg.Client({ connectionString: platform.config.databaseUrl });
  await client.connect();
  try {
    await pipeline(Readable.from([Buffer.from(csv)]), client.query(copyFrom('COPY email.email_log_roundtrip FROM STDIN WITH (FORMAT csv, HEADER true)')));
  } finally {
    await client.end();
  }
  const after = (await platform.db.raw('select t::text as row from email.email_log_roundtrip t order by id')).rows.map((r: { row: string }) => r.row);
  expect(after).toEqual(before);
  const nulls = await platform.db.raw(
    "select count(*) filter (where subject is null)::int as null_subjects, count(*) filter (where subject = '')::int as empty_subjects from email.email_log_roundtrip",
  );
  expect(nulls.rows[0]).toEqual({ null_subjects: 1, empty_subjects: 1 });
});

test('INTEGRATION_LOG and SCHEDULER_JOB_LOG round-trip too: each CSV loaded back with COPY equals the archived rows value for value', async () => {
  const tables = {
    INTEGRATION_LOG: {
      table: 'integration.integration_log',
      rows: [
        {
          component: 'soap:quotes',
          operation: 'urn:q#Get',
          url: 'http://peer.example/soap?apikey=***',
          method: 'POST',
          status_code: 200,
          duration_ms: 12,
          outcome: 'SUCCESS',
          request_body: '<a>"x", y\nz</a>',
          response_body: 'مرحبا',
          error: null,
        },
        {
          component: 'sms:peer',
          operation: null,
          url: 'http://peer.example/sms',
          method: 'GET',
          status_code: null,
          duration_ms: 0,
          outcome: 'FAILED',
          request_body: null,
          response_body: '',
          error: 'SOAP Fault: ünïcödé ✓',
        },
      ],
    },
    SCHEDULER_JOB_LOG: {
      table: 'settings.scheduler_job_log',
      rows: [
        {
          job_name: 'archive:EMAIL_LOG',
          job_key: 'rt-1',
          status: 'SUCCESS',
          started_at: '2025-01-01T01:00:00.123456Z',
          finished_at: '2025-01-01T01:00:09Z',
          rows_affected: 3,
          message: null,
        },
        {
          job_name: 'reconcile',
          job_key: 'rt-2',
          status: 'SKIPPED',
          started_at: '2025-01-02T01:00:00Z',
          finished_at: null,
          rows_affected: 0,
          message: 'no policy, "quoted", comma',
        },
      ],
    },
  } as const;
  for (const [logType, { table, rows }] of Object.entries(tables)) {
    await ensureLogPartitions(platform.db, { logType: logType as LogType, from: new Date('2025-02-01T00:00:00Z'), to: new Date('2025-02-01T00:00:00Z') });
    for (const [i, row] of rows.entries()) {
      await platform
        .db(table)
        .insert({ ...row, site_id: 'site-rt', created_at: platform.db.raw(`'2025-02-0${i + 1} 10:11:12.${654321 + i}+00'::timestamptz`) });
    }
    // The rows made old above; the job log also holds the earlier run's own row for this site, too recent to archive.
    const before = (
      await platform.db.raw(`select t::text as row from ${table} t where site_id = 'site-rt' and created_at < '2026-01-01' order by id`)
    ).rows.map((r: { row: string }) => r.row);
    expect(
      (await call(api.url, 'POST', '/api/settings/archive-policies', { token: admin, body: { logType, siteId: 'site-rt', retentionDays: 30, enabled: true } }))
        .status,
    ).toBe(201);
    const started = await call(api.url, 'POST', '/api/settings/archive-policies/run', { token: admin, body: { logType, siteId: 'site-rt' } });
    expect(started.status).toBe(202);
    const outcome = await archiveOutcome(platform, started.body.runs[0].workflowId, started.body.runs[0].runId);
    const site = outcome.sites.find((entry) => entry.siteId === 'site-rt')!;
    expect(site).toEqual(expect.objectContaining({ state: 'DONE', rowsExported: rows.length, rowsDeleted: rows.length }));
    const csv = await download(site.assetId!, 'site-rt');
    const copy = `${table}_roundtrip`;
    await platform.db.raw(`create table ${copy} (like ${table})`);
    const client = new pg.Client({ connectionString: platform.config.databaseUrl });
    await client.connect();
    try {
      await pipeline(Readable.from([Buffer.from(csv)]), client.query(copyFrom(`COPY ${copy} FROM STDIN WITH (FORMAT csv, HEADER true)`)));
    } finally {
      await client.end();
    }
    const after = (await platform.db.raw(`select t::text as row from ${copy} t order by id`)).rows.map((r: { row: string }) => r.row);
    expect(after).toEqual(before);
  }
});

test('GET /api/settings/scheduler-job-logs lists the runs per site, filtered and paged; ADMIN only', async () => {
  const logs = await call(api.url, 'GET', '/api/settings/scheduler-job-logs?siteId=site-r', { token: admin });
  expect(logs.status).toBe(200);
  expect(logs.body.items).toEqual([expect.objectContaining({ siteId: 'site-r', jobName: 'archive:EMAIL_LOG', status: 'SUCCESS', rowsAffected: 4 })]);
  expect((await call(api.url, 'GET', '/api/settings/scheduler-job-logs?siteId=site-r&outcome=FAILED', { token: admin })).body.items).toEqual([]);
  const skipped = await call(api.url, 'GET', '/api/settings/scheduler-job-logs?job=archive:EMAIL_LOG&outcome=SKIPPED', { token: admin });
  expect(skipped.body.items).toEqual([expect.objectContaining({ siteId: 'site-c', status: 'SKIPPED', message: expect.stringContaining('disabled') })]);
  expect((await call(api.url, 'GET', '/api/settings/scheduler-job-logs?job=deploy-reconcile', { token: admin })).body.items).toEqual([]);
  const firstPage = await call(api.url, 'GET', '/api/settings/scheduler-job-logs?limit=1', { token: admin });
  expect(firstPage.body.items).toHaveLength(1);
  const viewer = await platform.token({ sub: 'vic', roles: ['VIEWER'], sites: ['site-r'] });
  expectProblem(await call(api.url, 'GET', '/api/settings/scheduler-job-logs', { token: viewer }), 403, 'FORBIDDEN');
});

test('a failing sink deletes nothing for its site, marks it failed, the others archive (or are skipped, as their policy says), each with its job-log row; the next run finishes it', async () => {
  await platform.db('settings.archive_policy').where({ log_type: 'EMAIL_LOG' }).delete();
  await policy(null, 90);
  await policy('site-skip', 10, false);
  const failing = await seedEmailLogs(platform.db, { siteId: 'site-f', count: 3, ageDays: 120 });
  await seedEmailLogs(platform.db, { siteId: 'site-g', count: 2, ageDays: 120 });
  await seedEmailLogs(platform.db, { siteId: 'site-skip', count: 2, ageDays: 120 });
  proxy.failSites.add('site-f');

  const { outcome, report, runId } = await runEmailArchive({ siteId: undefined });
  expect(outcome.status).toBe('FAILED');
  expect(report.status).toBe('FAILED');
  // The run fails as ARCHIVE_SITES_FAILED, naming the site, with the report as the failure's details.
  const failure = await runFailure(platform.temporal.client.workflow.getHandle('archive:EMAIL_LOG').result());
  expect(failure.type).toBe('ARCHIVE_SITES_FAILED');
  expect(failure.message).toContain('site-f');
  const f = report.sites.find((s: { siteId: string }) => s.siteId === 'site-f');
  expect(f).toEqual(expect.objectContaining({ state: 'FAILED', rowsDeleted: 0, assetId: null }));
  expect(f.error).toContain('500');
  expect(report.sites.find((s: { siteId: string }) => s.siteId === 'site-g')).toEqual(expect.objectContaining({ state: 'DONE', rowsDeleted: 2 }));
  expect(await remainingIds(platform.db, 'site-f')).toEqual(failing);
  expect(await remainingIds(platform.db, 'site-g')).toEqual([]);
  expect(await platform.db('assets.asset').where({ site_id: 'site-f' }).first()).toBeUndefined();
  // One run, three outcomes, each with its job-log row.
  const runLogs = await platform
    .db('settings.scheduler_job_log')
    .where('job_key', 'like', `${runId}:%`)
    .whereIn('site_id', ['site-f', 'site-g', 'site-skip'])
    .orderBy('site_id');
  expect(runLogs.map((row) => [row.site_id, row.status, Number(row.rows_affected)])).toEqual([
    ['site-f', 'FAILED', 0],
    ['site-g', 'SUCCESS', 2],
    ['site-skip', 'SKIPPED', 0],
  ]);
  expect(runLogs[0].message).toContain('500');

  proxy.failSites.clear();
  const second = await runEmailArchive();
  expect(second.report.status).toBe('COMPLETED');
  expect(second.report.resumedParts).toBe(1);
  expect(await remainingIds(platform.db, 'site-f')).toEqual([]);
  const assets = await platform.db('assets.asset').where({ site_id: 'site-f' });
  expect(assets).toHaveLength(1);
  expect(csvIds(await download(assets[0].id, 'site-f'))).toEqual(failing);
});

test('a staged file that is gone (CSV or Parquet), or whose bytes changed on disk, is written again from the manifest before it is uploaded, hashing as it did', async () => {
  await platform.db('settings.archive_policy').where({ log_type: 'EMAIL_LOG' }).delete();
  await policy(null, 90);
  const gone = await seedEmailLogs(platform.db, { siteId: 'site-gone', count: 3, ageDays: 120 });
  const changed = await seedEmailLogs(platform.db, { siteId: 'site-changed', count: 4, ageDays: 120 });
  // A Parquet part written again must give the very bytes recorded: the same CSV encodes the same way.
  const createdParquet = await call(api.url, 'POST', '/api/settings/archive-policies', {
    token: admin,
    body: { logType: 'EMAIL_LOG', siteId: 'site-gone-pq', retentionDays: 90, enabled: true, format: 'parquet' },
  });
  expect(createdParquet.status).toBe(201);
  const goneParquet = await seedEmailLogs(platform.db, { siteId: 'site-gone-pq', count: 5, ageDays: 120 });
  proxy.failSites.add('site-gone');
  proxy.failSites.add('site-changed');
  proxy.failSites.add('site-gone-pq');
  expect((await runEmailArchive()).report.status).toBe('FAILED');
  proxy.failSites.clear();

  const exported = async (siteId: string) => platform.db('settings.archive_part').where({ site_id: siteId, state: 'EXPORTED' }).first();
  const staged = async (siteId: string) => stagingFile(platform.config.dataDir, (await exported(siteId)).id, (await exported(siteId)).format);
  const recordedSha256 = {
    'site-gone': (await exported('site-gone')).sha256,
    'site-changed': (await exported('site-changed')).sha256,
    'site-gone-pq': (await exported('site-gone-pq')).sha256,
  };
  expect(await staged('site-gone-pq')).toMatch(/\.parquet$/);
  // The Parquet part keeps the settings it was encoded with: it is written again with them, whatever today's rule.
  expect((await exported('site-gone-pq')).encoder).toEqual({ rowGroupRows: expect.any(Number) });
  expect((await exported('site-gone')).encoder).toBeNull();
  fs.rmSync(await staged('site-gone'));
  fs.rmSync(await staged('site-gone-pq'));
  const bytes = fs.readFileSync(await staged('site-changed'));
  const at = bytes.lastIndexOf('@');
  expect(at).toBeGreaterThan(0);
  bytes[at] = '#'.charCodeAt(0);
  fs.writeFileSync(await staged('site-changed'), bytes);

  // Every part the failed run left (its two sites', and any other site's in the same month) is finished first.
  const left = await platform.db('settings.archive_part').where({ log_type: 'EMAIL_LOG' }).whereNot({ state: 'DELETED' }).select('site_id');
  expect(left.map((part) => part.site_id)).toEqual(expect.arrayContaining(['site-gone', 'site-changed', 'site-gone-pq']));
  const second = await runEmailArchive();
  expect(second.report.status).toBe('COMPLETED');
  expect(second.report.resumedParts).toBe(left.length);
  for (const [siteId, ids] of [
    ['site-gone', gone],
    ['site-changed', changed],
  ] as const) {
    expect(await remainingIds(platform.db, siteId)).toEqual([]);
    const assets = await platform.db('assets.asset').where({ site_id: siteId });
    expect(assets).toHaveLength(1);
    const csv = await download(assets[0].id, siteId);
    expect(csvIds(csv)).toEqual(ids);
    expect(crypto.createHash('sha256').update(csv).digest('hex')).toBe(recordedSha256[siteId]);
  }
  expect(await remainingIds(platform.db, 'site-gone-pq')).toEqual([]);
  const [parquet] = await platform.db('assets.asset').where({ site_id: 'site-gone-pq' });
  expect(parquet).toEqual(expect.objectContaining({ sha256: recordedSha256['site-gone-pq'], content_type: 'application/vnd.apache.parquet' }));
  const viewer = await platform.token({ sub: 'm', roles: ['VIEWER'], sites: ['site-gone-pq'] });
  const parquetBytes = Buffer.from(
    await (await fetch(`${api.url}/api/assets/${parquet.id}/download`, { headers: { authorization: `Bearer ${viewer}` } })).arrayBuffer(),
  );
  expect(crypto.createHash('sha256').update(parquetBytes).digest('hex')).toBe(recordedSha256['site-gone-pq']);
  const parquetPart = await platform.db('settings.archive_part').where({ asset_id: parquet.id }).first();
  expect([Number(parquetPart.row_count), Number(parquetPart.min_id), Number(parquetPart.max_id)]).toEqual([5, goneParquet[0], goneParquet[4]]);
});

test("dryRun counts what would be archived and changes nothing; the run goes at bulk priority under its site's key", async () => {
  const ids = await seedEmailLogs(platform.db, { siteId: 'site-dry', count: 4, ageDays: 365 });
  const partsBefore = await platform.db('settings.archive_part').count({ n: '*' }).first();

  const { report, runId } = await runEmailArchive({ siteId: 'site-dry', dryRun: true });
  expect(await fairShareOfRun(platform.temporal, 'archive:EMAIL_LOG', runId)).toEqual({ priorityKey: PRIORITY.bulk, fairnessKey: 'site-dry' });

  expect(report.dryRun).toBe(true);
  expect(report.sites).toEqual([expect.objectContaining({ siteId: 'site-dry', state: 'DRY_RUN', rowsExported: 4, rowsDeleted: 0, assetId: null })]);
  expect(await remainingIds(platform.db, 'site-dry')).toEqual(ids);
  expect(await platform.db('settings.archive_part').count({ n: '*' }).first()).toEqual(partsBefore);
  expect(await platform.db('assets.asset').where({ site_id: 'site-dry' }).first()).toBeUndefined();
  const logged = await platform.db('settings.scheduler_job_log').where({ site_id: 'site-dry' });
  expect(logged.map((row) => [row.status, Number(row.rows_affected), row.message])).toEqual([['DRY_RUN', 0, 'dry run of EMAIL_LOG: 4 rows would be archived']]);
  await platform.db('email.email_log').where({ site_id: 'site-dry' }).delete();
});

test('a second run while one is in progress -> 409 ARCHIVE_RUN_IN_PROGRESS', async () => {
  await seedEmailLogs(platform.db, { siteId: 'site-busy', count: 2, ageDays: 365 });
  const hold = await holdDeletes(platform.config.databaseUrl, 'email.email_log');
  let started;
  try {
    started = await call(api.url, 'POST', '/api/settings/archive-policies/run', { token: admin, body: { logType: 'EMAIL_LOG' } });
    expect(started.status).toBe(202);
    await waitUntil('the run to wait on its delete', async () => (await sessionsWaitingOnLocks(platform.config.databaseUrl)) > 0);
    const again = await call(api.url, 'POST', '/api/settings/archive-policies/run', { token: admin, body: { logType: 'EMAIL_LOG' } });
    expectProblem(again, 409, 'ARCHIVE_RUN_IN_PROGRESS');
    const all = await call(api.url, 'POST', '/api/settings/archive-policies/run', { token: admin, body: {} });
    expectProblem(all, 409, 'ARCHIVE_RUN_IN_PROGRESS');
    const running = await call(api.url, 'GET', '/api/settings/archive-runs/archive:EMAIL_LOG', { token: admin });
    expect(running.body.status).toBe('RUNNING');
    // A year old, the rows' month is past retention for every site in it: the run waits to detach it.
    expect(running.body.partitions).toEqual(expect.arrayContaining([expect.objectContaining({ state: 'DETACHING', rowsExported: 2 })]));
  } finally {
    await hold.release();
  }
  const outcome = await archiveOutcome(platform, 'archive:EMAIL_LOG', started!.body.runs[0].runId);
  expect(outcome.status).toBe('COMPLETED');
  expect(await remainingIds(platform.db, 'site-busy')).toEqual([]);
});

describe('archive files are read-only records', () => {
  let archived: { assetId: string; runId: string };
  let editor: string;
  const SITE = 'site-records';

  beforeAll(async () => {
    await policy(SITE, 30);
    await seedEmailLogs(platform.db, { siteId: SITE, count: 4, ageDays: 45 });
    const started = await call(api.url, 'POST', '/api/settings/archive-policies/run', { token: admin, body: { logType: 'EMAIL_LOG', siteId: SITE } });
    const [run] = started.body.runs;
    await archiveOutcome(platform, run.workflowId, run.runId);
    const list = await call(api.url, 'GET', `/api/assets?siteId=${SITE}&folder=/archive`, { token: admin });
    archived = { assetId: list.body.items[0].id, runId: run.runId };
    editor = await platform.token({ sub: 'eve', name: 'Eve Editor', roles: ['EDITOR'], sites: [SITE] });
  });

  const asset = (token = admin) => call(api.url, 'GET', `/api/assets/${archived.assetId}`, { token });

  test('an EDITOR cannot delete, rename, move, restore, publish or archive an archive file: 403 ARCHIVE_READ_ONLY', async () => {
    const before = (await asset()).body;
    const id = archived.assetId;
    expectProblem(await call(api.url, 'DELETE', `/api/assets/${id}`, { token: editor }), 403, 'ARCHIVE_READ_ONLY');
    expectProblem(
      await call(api.url, 'PUT', `/api/assets/${id}`, { token: editor, body: { name: 'renamed.csv', folder: '/archive' } }),
      403,
      'ARCHIVE_READ_ONLY',
    );
    expectProblem(
      await call(api.url, 'PUT', `/api/assets/${id}`, { token: editor, body: { name: before.name, folder: '/elsewhere' } }),
      403,
      'ARCHIVE_READ_ONLY',
    );
    const rev = (await call(api.url, 'GET', `/api/assets/${id}/history`, { token: editor })).body.items[0].rev;
    expectProblem(await call(api.url, 'POST', `/api/assets/${id}/restore/${rev}`, { token: editor }), 403, 'ARCHIVE_READ_ONLY');
    expectProblem(await call(api.url, 'POST', `/api/assets/${id}/publish`, { token: editor }), 403, 'ARCHIVE_READ_ONLY');
    expectProblem(await call(api.url, 'POST', `/api/assets/${id}/archive`, { token: editor }), 403, 'ARCHIVE_READ_ONLY');
    // Not even an ADMIN edits one.
    expectProblem(
      await call(api.url, 'PUT', `/api/assets/${id}`, { token: admin, body: { name: 'renamed.csv', folder: '/archive' } }),
      403,
      'ARCHIVE_READ_ONLY',
    );
    expect((await asset()).body).toEqual(before);
  });

  test('nobody uploads into /archive or moves a file there: 403 ARCHIVE_READ_ONLY', async () => {
    const upload = async (folder: string) => {
      const form = new FormData();
      form.set('siteId', SITE);
      form.set('folder', folder);
      form.set('file', new Blob(['id\n1\n'], { type: 'text/csv' }), 'forged.csv');
      const answer = await fetch(`${api.url}/api/assets`, { method: 'POST', headers: { authorization: `Bearer ${editor}` }, body: form });
      return { status: answer.status, headers: answer.headers, body: (await answer.json()) as any, text: '' };
    };
    expectProblem(await upload('/archive'), 403, 'ARCHIVE_READ_ONLY');
    expectProblem(await upload('/archive/2026'), 403, 'ARCHIVE_READ_ONLY');
    const elsewhere = await upload('/reports');
    expect(elsewhere.status).toBe(201);
    expectProblem(
      await call(api.url, 'PUT', `/api/assets/${elsewhere.body.id}`, { token: editor, body: { name: 'forged.csv', folder: '/archive' } }),
      403,
      'ARCHIVE_READ_ONLY',
    );
    const files = await call(api.url, 'GET', `/api/assets?siteId=${SITE}&folder=/archive`, { token: admin });
    expect(files.body.items.map((item: { id: string }) => item.id)).toEqual([archived.assetId]);
  });

  test('an ADMIN deletes an archive file, and an audit row keeps who, when, which run and how many rows it held', async () => {
    const adminNamed = await platform.token({ sub: 'ada', name: 'Ada Admin', roles: ['ADMIN'] });
    expect((await call(api.url, 'DELETE', `/api/assets/${archived.assetId}`, { token: adminNamed })).status).toBe(204);
    const audit = await platform.db('assets.archive_deletion').where({ asset_id: archived.assetId });
    expect(audit).toEqual([
      expect.objectContaining({
        site_id: SITE,
        file_name: expect.stringMatching(/^email_log_.*_001\.csv$/),
        log_type: 'EMAIL_LOG',
        workflow_id: 'archive:EMAIL_LOG',
        run_id: archived.runId,
        row_count: 4,
        deleted_by: 'ada',
        deleted_by_name: 'Ada Admin',
        deleted_at: expect.any(Date),
      }),
    ]);
  });
});

test('a site under legal hold: while its sink fails, not one of its rows is deleted; once the sink answers, its rows go only with their file confirmed, and that file is held', async () => {
  expect((await policy('site-held-run', 30)).status).toBe(201);
  const ids = await seedEmailLogs(platform.db, { siteId: 'site-held-run', count: 3, ageDays: 60 });
  const held = await call(api.url, 'POST', '/api/settings/archive-holds', { token: admin, body: { siteId: 'site-held-run', reason: 'litigation' } });
  expect(held.status).toBe(201);

  proxy.failSites.add('site-held-run');
  const failed = await runEmailArchive({ siteId: 'site-held-run' });
  proxy.failSites.clear();
  expect(failed.report.status).toBe('FAILED');
  expect(await remainingIds(platform.db, 'site-held-run')).toEqual(ids);
  expect(await platform.db('assets.asset').where({ site_id: 'site-held-run' })).toEqual([]);
  expect((await platform.db('settings.archive_part').where({ site_id: 'site-held-run' })).map((part) => part.state)).toEqual(['EXPORTED']);

  const second = await runEmailArchive({ siteId: 'site-held-run' });
  expect(second.report.status).toBe('COMPLETED');
  expect(await remainingIds(platform.db, 'site-held-run')).toEqual([]);
  const [part] = await platform.db('settings.archive_part').where({ site_id: 'site-held-run' });
  const [asset] = await platform.db('assets.asset').where({ site_id: 'site-held-run' });
  expect(part).toEqual(expect.objectContaining({ state: 'DELETED', asset_id: asset.id, sha256: asset.sha256 }));
  expect(csvIds(await download(asset.id, 'site-held-run'))).toEqual(ids);
  expectProblem(await call(api.url, 'DELETE', `/api/assets/${asset.id}`, { token: admin }), 409, 'ARCHIVE_HELD');
});

test("where the API does not share the workers' data folder, the part's bytes are sent instead, and it is stored and gated all the same", async () => {
  const ids = await seedEmailLogs(platform.db, { siteId: 'site-unshared', count: 3, ageDays: 400 });
  await seedEmailLogs(platform.db, { siteId: 'site-shared', count: 2, ageDays: 400 });
  proxy.unsharedSites.add('site-unshared');
  proxy.seen.length = 0;
  try {
    const { report } = await runEmailArchive();
    const unshared = report.sites.find((s: { siteId: string }) => s.siteId === 'site-unshared');
    expect(unshared).toEqual(expect.objectContaining({ state: 'DONE', rowsExported: 3, rowsDeleted: 3 }));
    expect(csvIds(await download(unshared.assetId, 'site-unshared'))).toEqual(ids);
    const routes = (site: string) => proxy.seen.filter((one) => one.site === site).map((one) => one.route);
    // Asked to take it (once, and once more after making sure the file is staged), then sent.
    expect(routes('site-unshared')).toEqual(['/api/assets/internal/archive-staged', '/api/assets/internal/archive-staged', '/api/assets/internal/archive']);
    expect(routes('site-shared')).toEqual(['/api/assets/internal/archive-staged']);
  } finally {
    proxy.unsharedSites.clear();
  }
});
