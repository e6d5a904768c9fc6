import pg from 'pg';
import { startWorkflow } from '../../temporal-config/client';
import { archiveLogs } from '../../workflows/archival/archive-logs';
import { archiveRunWorkflowId } from '../../workflows/archival/definitions';
import { ensureLogPartitions, listLogPartitions } from '../../data/archival/log-partitions';
import { openPartitionArchive, partitionAttachment, partitionDropLock } from '../../data/archival/partition-archives';
import { exportPartsInSnapshot } from '../../data/archival/part-files';
import { platformWithApi, RunningWorker } from '../support/platform';
import { call } from '../support/http';
import { waitUntil } from '../support/wait';
import { archiveFileIds, archiveOutcome, dropWaitingSessions, globalRetention, sessionsWaitingOnLocks } from './harness';
import { remainingIds } from './seed';
import { recordHistory } from '../support/histories';
import { fairShareOf } from '../../domain/fairness';

/**
 * Partition-drop archival: a month of a log table past retention for every site in it is exported per site,
 * uploaded and confirmed, detached, recorded and dropped, and not one row of it is deleted by a DELETE.
 */
const thisFile = platformWithApi();
let worker: RunningWorker;
let admin: string;

beforeAll(async () => {
  worker = await thisFile.platform.startWorker(['archival'], { API_INTERNAL_URL: thisFile.api.url });
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  await globalRetention(thisFile.api.url, admin, 'EMAIL_LOG', 30);
  await thisFile.platform.db.raw('create extension if not exists pg_stat_statements');
});

/** The first instant of the month `back` months before this one, UTC. */
const monthsBack = (back: number) => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1));
};
const partitionName = (month: Date) => `email.email_log_p${month.toISOString().slice(0, 7).replace('-', '')}`;

/** Inserts `count` rows of a site in the month that starts at `month`, a day apart from its 2nd; answers their ids. */
async function seedMonth(siteId: string, month: Date, count: number): Promise<number[]> {
  await ensureLogPartitions(thisFile.platform.db, { logType: 'EMAIL_LOG', from: month, to: month });
  const rows = Array.from({ length: count }, (_, i) => ({
    site_id: siteId,
    created_at: new Date(month.getTime() + (1 + (i % 25)) * 86400000 + i * 1000),
    recipient: `r${i}@example.test`,
    status: 'SUCCESS',
    attempts: 1,
    subject: `subject ${i} — مرحبا`,
  }));
  const inserted = (await thisFile.platform.db('email.email_log').insert(rows).returning('id')) as Array<{ id: number }>;
  return inserted.map((row) => Number(row.id));
}

const startRun = () =>
  startWorkflow(thisFile.platform.temporal, archiveLogs, {
    workflowId: archiveRunWorkflowId('EMAIL_LOG'),
    taskQueue: 'archival',
    args: [{ logType: 'EMAIL_LOG', heartbeatTimeout: '3 seconds' }],
    priority: fairShareOf('archiveRun'),
  });

/** The DELETE statements this database ran on the email log (its parent or any month of it) since the last reset. */
async function emailLogDeletes(): Promise<number> {
  const { rows } = (await thisFile.platform.db.raw(
    `select coalesce(sum(calls), 0)::int as n from pg_stat_statements
     where dbid = (select oid from pg_database where datname = current_database()) and query ~* '^\\s*delete' and query ~* 'email_log'`,
  )) as { rows: Array<{ n: number }> };
  return rows[0].n;
}

const resetStatements = () =>
  thisFile.platform.db.raw('select pg_stat_statements_reset(0, (select oid from pg_database where datname = current_database()), 0)');

const archiveOf = (name: string) => thisFile.platform.db('settings.archive_partition').where({ partition_name: name }).orderBy('created_at');
const partsOf = (archiveId: string) => thisFile.platform.db('settings.archive_part').where({ partition_archive_id: archiveId }).orderBy(['site_id', 'part_no']);
const isTable = async (name: string) =>
  ((await thisFile.platform.db.raw('select to_regclass(?) is not null as found', [name])) as { rows: Array<{ found: boolean }> }).rows[0].found;
const monthsOfTable = async () => (await listLogPartitions(thisFile.platform.db, 'EMAIL_LOG')).map((partition) => partition.name);

/** The archive files of a site, each as its ids, and the asset count, once the run has closed. */
async function archivedIds(siteId: string): Promise<number[]> {
  return (await archiveFileIds(thisFile.platform, thisFile.api.url, siteId)).flat().sort((a, b) => a - b);
}

test('a month past retention for every site in it is archived whole: parts per site confirmed, the month detached and dropped, and no DELETE on the log table', async () => {
  const month = monthsBack(6);
  const name = partitionName(month);
  const ids = { 'pd-a': await seedMonth('pd-a', month, 40), 'pd-b': await seedMonth('pd-b', month, 25) };
  await resetStatements();

  const run = await startRun();
  const outcome = await archiveOutcome(thisFile.platform, run.workflowId, run.runId);

  expect(outcome.status).toBe('COMPLETED');
  expect(outcome.partitions).toEqual([expect.objectContaining({ name, state: 'DROPPED', rowsExported: 65, rowsDropped: 65, rowsReturned: 0, error: null })]);
  expect(outcome.sites).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ siteId: 'pd-a', state: 'DONE', rowsExported: 40, rowsDeleted: 40 }),
      expect.objectContaining({ siteId: 'pd-b', state: 'DONE', rowsExported: 25, rowsDeleted: 25 }),
    ]),
  );
  expect(await emailLogDeletes()).toBe(0);
  expect(await isTable(name)).toBe(false);
  expect(await monthsOfTable()).not.toContain(name);
  expect(await remainingIds(thisFile.platform.db, 'pd-a')).toEqual([]);
  expect(await archivedIds('pd-a')).toEqual(ids['pd-a']);
  expect(await archivedIds('pd-b')).toEqual(ids['pd-b']);
  const [archive] = await archiveOf(name);
  // No late row: the ledger judged the month, without joining its rows with the parts' ids.
  expect(archive).toEqual(expect.objectContaining({ state: 'DROPPED', rows_dropped: 65, rows_returned: 0, stray_check: 'ledger' }));
  const fileName = `email_log_month_${name.slice(-6)}_${archive.id.slice(0, 8)}_001.csv`;
  expect((await partsOf(archive.id)).map((part) => [part.site_id, part.state, part.file_name])).toEqual([
    ['pd-a', 'DELETED', fileName],
    ['pd-b', 'DELETED', fileName],
  ]);
  // Each site's job-log row counts what went with the month.
  const jobLog = await call(thisFile.api.url, 'GET', '/api/settings/scheduler-job-logs?siteId=pd-a', { token: admin });
  expect(jobLog.body.items).toEqual([expect.objectContaining({ siteId: 'pd-a', status: 'SUCCESS', rowsAffected: 40 })]);
});

test('two months past retention: both are archived whole and dropped, with no DELETE', async () => {
  const earlier = monthsBack(13);
  const later = monthsBack(12);
  const ids = { earlier: await seedMonth('pd-two', earlier, 30), later: await seedMonth('pd-two', later, 20) };
  await resetStatements();
  const run = await startRun();

  const outcome = await archiveOutcome(thisFile.platform, run.workflowId, run.runId);
  await recordHistory(thisFile.platform.temporal, { workflowId: run.workflowId, runId: run.runId, name: 'archive-run-two-months-dropped' });
  expect(outcome.status).toBe('COMPLETED');
  expect(outcome.partitions).toEqual([
    expect.objectContaining({ name: partitionName(earlier), state: 'DROPPED', rowsExported: 30, rowsDropped: 30, rowsReturned: 0, error: null }),
    expect.objectContaining({ name: partitionName(later), state: 'DROPPED', rowsExported: 20, rowsDropped: 20, rowsReturned: 0, error: null }),
  ]);
  expect(outcome.sites).toEqual(expect.arrayContaining([expect.objectContaining({ siteId: 'pd-two', state: 'DONE', rowsExported: 50, rowsDeleted: 50 })]));
  expect(await emailLogDeletes()).toBe(0);
  expect(await isTable(partitionName(earlier))).toBe(false);
  expect(await isTable(partitionName(later))).toBe(false);
  expect(await archivedIds('pd-two')).toEqual([...ids.earlier, ...ids.later]);
});

test('a month only partly past retention keeps the row path: its expired site is deleted row by row, the other site and the month stay', async () => {
  const month = monthsBack(5);
  const name = partitionName(month);
  const created = await call(thisFile.api.url, 'POST', '/api/settings/archive-policies', {
    token: admin,
    body: { logType: 'EMAIL_LOG', siteId: 'pd-keep', retentionDays: 3650, enabled: true },
  });
  expect(created.status).toBe(201);
  const expired = await seedMonth('pd-rows', month, 10);
  const kept = await seedMonth('pd-keep', month, 5);

  const run = await startRun();
  const outcome = await archiveOutcome(thisFile.platform, run.workflowId, run.runId);

  expect(outcome.status).toBe('COMPLETED');
  expect(outcome.partitions).toEqual([]);
  expect(outcome.sites).toEqual(expect.arrayContaining([expect.objectContaining({ siteId: 'pd-rows', state: 'DONE', rowsExported: 10, rowsDeleted: 10 })]));
  expect(await monthsOfTable()).toContain(name);
  expect(await remainingIds(thisFile.platform.db, 'pd-rows')).toEqual([]);
  expect(await remainingIds(thisFile.platform.db, 'pd-keep')).toEqual(kept);
  expect(await archivedIds('pd-rows')).toEqual(expired);
  expect(await archiveOf(name)).toEqual([]);
});

test('a worker killed between the upload and the detach: the run resumes, the month is detached and dropped once, every row in exactly one file; a row written after the export is put back and goes by the row path', async () => {
  const month = monthsBack(7);
  const name = partitionName(month);
  const ids = await seedMonth('pd-k1', month, 30);
  // SHARE UPDATE EXCLUSIVE on the log table itself (not its months): the month's archive opens and its
  // export reads on, its detach waits.
  const holder = new pg.Client({ connectionString: thisFile.platform.config.databaseUrl });
  await holder.connect();
  await holder.query('begin');
  await holder.query(`lock table only email.email_log in share update exclusive mode`);

  const run = await startRun();
  const archive = await waitUntil('every part confirmed and the detach waiting', async () => {
    const [open] = await archiveOf(name);
    if (open?.state !== 'EXPORTED') return null;
    const parts = await partsOf(open.id);
    const confirmed = parts.length > 0 && parts.every((part) => part.state === 'CONFIRMED');
    return confirmed && (await sessionsWaitingOnLocks(thisFile.platform.config.databaseUrl)) > 0 ? open : null;
  });
  const partsBefore = (await partsOf(archive.id)).map((part) => [part.id, part.asset_id]);
  // A late write to the month, after its export: it is not in any part.
  const [late] = (await thisFile.platform
    .db('email.email_log')
    .insert({ site_id: 'pd-k1', created_at: new Date(month.getTime() + 3 * 86400000), recipient: 'late@example.test', status: 'SUCCESS', attempts: 1 })
    .returning('id')) as Array<{ id: number }>;

  await worker.kill();
  await dropWaitingSessions(thisFile.platform.config.databaseUrl);
  await holder.query('commit');
  await holder.end();
  expect(await monthsOfTable()).toContain(name);
  worker = await thisFile.platform.startWorker(['archival'], { API_INTERNAL_URL: thisFile.api.url });

  const outcome = await archiveOutcome(thisFile.platform, run.workflowId, run.runId);
  expect(outcome.status).toBe('COMPLETED');
  expect(outcome.partitions).toEqual([expect.objectContaining({ name, state: 'DROPPED', rowsExported: 30, rowsDropped: 30, rowsReturned: 1 })]);
  expect((await partsOf(archive.id)).map((part) => [part.id, part.asset_id])).toEqual(partsBefore);
  // Uploaded once: the month's one part is the site's one month file in the sink.
  expect(await thisFile.platform.db('assets.asset').where({ site_id: 'pd-k1' }).where('name', 'like', 'email_log_month_%')).toHaveLength(partsBefore.length);
  // The late row was put back into its month, made again, and the same run's row path archived it.
  expect(outcome.sites).toEqual(expect.arrayContaining([expect.objectContaining({ siteId: 'pd-k1', state: 'DONE', rowsExported: 31, rowsDeleted: 31 })]));
  expect(await archivedIds('pd-k1')).toEqual([...ids, Number(late.id)]);
  expect(await remainingIds(thisFile.platform.db, 'pd-k1')).toEqual([]);
  expect(await isTable(`${name}_detached`)).toBe(false);
  expect((await archiveOf(name))[0]).toEqual(expect.objectContaining({ rows_returned: 1, stray_check: 'ledger' }));
});

test('a worker killed between the detach and the drop: the run resumes, drops the month once, every row in exactly one file', async () => {
  const month = monthsBack(8);
  const name = partitionName(month);
  const ids = await seedMonth('pd-k2', month, 30);
  await resetStatements();
  // The drop takes this advisory lock first: holding it pins the run after its detach.
  const holder = new pg.Client({ connectionString: thisFile.platform.config.databaseUrl });
  await holder.connect();
  await holder.query('select pg_advisory_lock(hashtext($1))', [partitionDropLock(name)]);

  const run = await startRun();
  const archive = await waitUntil('the month detached and its drop waiting', async () => {
    const [open] = await archiveOf(name);
    return open?.state === 'DETACHED' && (await sessionsWaitingOnLocks(thisFile.platform.config.databaseUrl)) > 0 ? open : null;
  });
  expect(await monthsOfTable()).not.toContain(name);
  expect(await isTable(name)).toBe(true);
  const partsBefore = (await partsOf(archive.id)).map((part) => [part.id, part.asset_id]);

  await worker.kill();
  await dropWaitingSessions(thisFile.platform.config.databaseUrl);
  await holder.end();
  worker = await thisFile.platform.startWorker(['archival'], { API_INTERNAL_URL: thisFile.api.url });

  const outcome = await archiveOutcome(thisFile.platform, run.workflowId, run.runId);
  expect(outcome.status).toBe('COMPLETED');
  expect(outcome.partitions).toEqual([expect.objectContaining({ name, state: 'DROPPED', rowsExported: 30, rowsDropped: 30, rowsReturned: 0 })]);
  expect((await partsOf(archive.id)).map((part) => [part.id, part.asset_id, part.state])).toEqual(partsBefore.map((part) => [...part, 'DELETED']));
  expect(await isTable(name)).toBe(false);
  expect(await thisFile.platform.db('assets.asset').where({ site_id: 'pd-k2' })).toHaveLength(partsBefore.length);
  expect(await archivedIds('pd-k2')).toEqual(ids);
  expect(await emailLogDeletes()).toBe(0);
});

/** Sessions other than this one running a DETACH PARTITION, waiting or not. */
async function detachSessions(): Promise<number> {
  const { rows } = (await thisFile.platform.db.raw(
    `select count(*)::int as n from pg_stat_activity
     where datname = current_database() and pid <> pg_backend_pid() and state = 'active' and query ~* 'detach\\s+partition'`,
  )) as { rows: Array<{ n: number }> };
  return rows[0].n;
}

test('a worker killed while its detach waits: the detach ends with it (PostgreSQL sees its client gone), the month is left pending; the run resumes, finishes the detach (FINALIZE) and drops the month once', async () => {
  const month = monthsBack(9);
  const name = partitionName(month);
  const ids = await seedMonth('pd-k3', month, 20);
  // A reader of the log table in an open transaction: the detach's first step commits (the month pending
  // detach), its second waits for every transaction that uses the table, this one included.
  const reader = new pg.Client({ connectionString: thisFile.platform.config.databaseUrl });
  await reader.connect();
  await reader.query('begin');
  await reader.query(`select count(*) from email.email_log where site_id = 'nobody'`);

  const run = await startRun();
  await waitUntil(
    'the month pending detach, its detach waiting',
    async () => (await partitionAttachment(thisFile.platform.db, name)) === 'DETACH_PENDING' && (await detachSessions()) > 0,
  );

  await worker.kill();
  // Nothing here ends the killed worker's session: PostgreSQL does, once it sees its client gone.
  await waitUntil("the killed worker's detach to end", async () => (await detachSessions()) === 0, { timeoutMs: 15000 });
  expect(await partitionAttachment(thisFile.platform.db, name)).toBe('DETACH_PENDING');
  await reader.query('commit');
  await reader.end();
  worker = await thisFile.platform.startWorker(['archival'], { API_INTERNAL_URL: thisFile.api.url });

  const outcome = await archiveOutcome(thisFile.platform, run.workflowId, run.runId);
  expect(outcome.status).toBe('COMPLETED');
  expect(outcome.partitions).toEqual([expect.objectContaining({ name, state: 'DROPPED', rowsExported: 20, rowsDropped: 20, rowsReturned: 0 })]);
  expect(await isTable(name)).toBe(false);
  expect(await monthsOfTable()).not.toContain(name);
  expect(await archivedIds('pd-k3')).toEqual(ids);
  expect(await remainingIds(thisFile.platform.db, 'pd-k3')).toEqual([]);
});

test("rows written while a site's export reads, and a site the month did not list: the late-row ledger finds both, and they are put back, into the month made again, which the same run then archives whole", async () => {
  const month = monthsBack(10);
  const name = partitionName(month);
  const ids = await seedMonth('pd-w', month, 25);
  const from = month.toISOString();
  const to = new Date(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() + 1, 1)).toISOString();
  // A worker that got as far as the month's export, through the same data functions as its activities.
  const archive = await openPartitionArchive(thisFile.platform.db, {
    workflowId: 'pd-w-earlier-run',
    runId: 'pd-w-earlier-run',
    logType: 'EMAIL_LOG',
    partition: { name, from, to, siteIds: ['pd-w'] },
  });
  expect(archive.late_rows_noted).toBe(true);
  const lateRow = (siteId: string, recipient: string) => ({
    site_id: siteId,
    created_at: new Date(month.getTime() + 4 * 86400000),
    recipient,
    status: 'SUCCESS',
    attempts: 1,
  });
  // A writer whose transaction is open while the export takes its snapshot: its row is not in the export.
  const writer = new pg.Client({ connectionString: thisFile.platform.config.databaseUrl });
  await writer.connect();
  await writer.query('begin');
  const { rows: written } = await writer.query<{ id: string }>(
    `insert into email.email_log (site_id, created_at, recipient, status, attempts) values ('pd-w', $1, 'open@example.test', 'SUCCESS', 1) returning id`,
    [new Date(month.getTime() + 5 * 86400000)],
  );
  // A site the month did not hold when it was judged expired: never exported by this archive.
  const [otherSite] = (await thisFile.platform.db('email.email_log').insert(lateRow('pd-w-other', 'other@example.test')).returning('id')) as Array<{
    id: number;
  }>;
  const exported = await exportPartsInSnapshot({
    databaseUrl: thisFile.platform.config.databaseUrl,
    dataDir: thisFile.platform.config.dataDir,
    workflowId: archive.workflow_id,
    runId: archive.run_id,
    logType: 'EMAIL_LOG',
    siteId: 'pd-w',
    cutoff: new Date(to),
    rowsPerPart: 1000,
    partition: { archiveId: archive.id, table: name, from: new Date(from) },
  });
  expect(exported.map((part) => part.rowCount)).toEqual([25]);
  await writer.query('commit');
  await writer.end();
  // Committed after the export, before the detach: late as well.
  const [afterExport] = (await thisFile.platform.db('email.email_log').insert(lateRow('pd-w', 'after@example.test')).returning('id')) as Array<{ id: number }>;

  // The next run finishes the month the earlier one left EXPORTING. What came back is a month of its own,
  // past retention for both its sites: the same run archives it whole in turn.
  const run = await startRun();
  const outcome = await archiveOutcome(thisFile.platform, run.workflowId, run.runId);
  expect(outcome.status).toBe('COMPLETED');
  expect(outcome.partitions).toEqual([
    expect.objectContaining({ name, state: 'DROPPED', rowsExported: 25, rowsDropped: 25, rowsReturned: 3 }),
    expect.objectContaining({ name, state: 'DROPPED', rowsExported: 3, rowsDropped: 3, rowsReturned: 0 }),
  ]);
  expect(await archiveOf(name)).toEqual([
    expect.objectContaining({ id: archive.id, rows_dropped: 25, rows_returned: 3, stray_check: 'ledger' }),
    expect.objectContaining({ rows_dropped: 3, rows_returned: 0, stray_check: 'ledger' }),
  ]);
  expect(await isTable(name)).toBe(false);
  expect(await archivedIds('pd-w')).toEqual([...ids, Number(written[0].id), Number(afterExport.id)].sort((a, b) => a - b));
  expect(await archivedIds('pd-w-other')).toEqual([Number(otherSite.id)]);
  expect(await remainingIds(thisFile.platform.db, 'pd-w')).toEqual([]);
  expect(await thisFile.platform.db('settings.archive_partition_late_row').where({ partition_archive_id: archive.id })).toEqual([]);
});

test('an exported row gone from the month before its drop: the ledger does not account for the month, so the drop joins its rows with the ids, and drops only the rows archived', async () => {
  const month = monthsBack(11);
  const name = partitionName(month);
  const ids = await seedMonth('pd-g', month, 20);
  // The drop takes this advisory lock first: holding it pins the run after its detach.
  const holder = new pg.Client({ connectionString: thisFile.platform.config.databaseUrl });
  await holder.connect();
  await holder.query('select pg_advisory_lock(hashtext($1))', [partitionDropLock(name)]);
  const run = await startRun();
  await waitUntil('the month detached and its drop waiting', async () => {
    const [open] = await archiveOf(name);
    return open?.state === 'DETACHED' && (await sessionsWaitingOnLocks(thisFile.platform.config.databaseUrl)) > 0;
  });
  // The detached month is a table of its own: one archived row goes from it.
  await thisFile.platform.db.raw(`delete from ${name} where id = ?`, [ids[0]]);
  await holder.end();

  const outcome = await archiveOutcome(thisFile.platform, run.workflowId, run.runId);
  expect(outcome.status).toBe('COMPLETED');
  expect(outcome.partitions).toEqual([expect.objectContaining({ name, state: 'DROPPED', rowsExported: 20, rowsDropped: 19, rowsReturned: 0 })]);
  expect((await archiveOf(name))[0]).toEqual(expect.objectContaining({ rows_dropped: 19, rows_returned: 0, stray_check: 'ids' }));
  expect(await archivedIds('pd-g')).toEqual(ids);
  expect(await isTable(name)).toBe(false);
});
