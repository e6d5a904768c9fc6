import pg from 'pg';
import { startWorkflow } from '../../temporal-config/client';
import { archiveLogs } from '../../workflows/archival/archive-logs';
import { archiveRunWorkflowId } from '../../workflows/archival/definitions';
import { platformWithApi, RunningWorker } from '../support/platform';
import { archiveFileIds, archiveOutcome, dropWaitingSessions, holdDeletes, sessionsWaitingOnLocks, globalRetention } from './harness';
import { waitUntil } from '../support/wait';
import { daysAgo, remainingIds, seedEmailLogs } from './seed';
import { ensureLogPartitions } from '../../data/archival/log-partitions';
import { fairShareOf } from '../../domain/fairness';

const thisFile = platformWithApi();
let worker: RunningWorker;
let admin: string;

beforeAll(async () => {
  worker = await thisFile.platform.startWorker(['archival'], { API_INTERNAL_URL: thisFile.api.url });
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  await globalRetention(thisFile.api.url, admin, 'EMAIL_LOG');
});

/** Starts a run through the platform's client helper, with a short heartbeat timeout so a dead worker's activity is retried soon. */
const startRun = (siteId: string, maxRowsPerPart?: number) =>
  startWorkflow(thisFile.platform.temporal, archiveLogs, {
    workflowId: archiveRunWorkflowId('EMAIL_LOG'),
    taskQueue: 'archival',
    args: [{ logType: 'EMAIL_LOG', siteId, heartbeatTimeout: '3 seconds', maxRowsPerPart }],
    priority: fairShareOf('archiveRun', siteId),
  });

async function partsOf(siteId: string) {
  return thisFile.platform.db('settings.archive_part').where({ site_id: siteId }).orderBy('created_at');
}

/** Starts a run and holds it where its part is confirmed by the sink and its delete waits. */
async function runPinnedBeforeDelete(siteId: string) {
  const hold = await holdDeletes(thisFile.platform.config.databaseUrl, 'email.email_log');
  const run = await startRun(siteId);
  await waitUntil('the part to be confirmed and its delete to wait', async () => {
    const [part] = await partsOf(siteId);
    return part?.state === 'CONFIRMED' && (await sessionsWaitingOnLocks(thisFile.platform.config.databaseUrl)) > 0;
  });
  return { run, hold };
}

const downloadIds = (siteId: string) => archiveFileIds(thisFile.platform, thisFile.api.url, siteId);

test('a worker killed after the upload and before the delete: the restarted run completes, rows deleted once, one asset', async () => {
  const ids = await seedEmailLogs(thisFile.platform.db, { siteId: 'site-kill', count: 5, ageDays: 60 });
  const { run, hold } = await runPinnedBeforeDelete('site-kill');

  await worker.kill();
  await dropWaitingSessions(thisFile.platform.config.databaseUrl);
  await hold.release();
  expect(await remainingIds(thisFile.platform.db, 'site-kill')).toEqual(ids);
  worker = await thisFile.platform.startWorker(['archival'], { API_INTERNAL_URL: thisFile.api.url });

  const outcome = await archiveOutcome(thisFile.platform, run.workflowId, run.runId);
  expect(outcome.status).toBe('COMPLETED');
  expect(outcome.sites).toEqual([expect.objectContaining({ siteId: 'site-kill', state: 'DONE', rowsExported: 5, rowsDeleted: 5 })]);
  expect(await remainingIds(thisFile.platform.db, 'site-kill')).toEqual([]);
  const parts = await partsOf('site-kill');
  expect(parts.map((p) => [p.state, Number(p.row_count), Number(p.rows_deleted)])).toEqual([['DELETED', 5, 5]]);
  expect(await downloadIds('site-kill')).toEqual([ids]);
  expect(await thisFile.platform.db('settings.scheduler_job_log').where({ site_id: 'site-kill' })).toHaveLength(1);
});

test('rows of a transaction open across the export, and rows inserted during the run, are not deleted by it', async () => {
  const early = await seedEmailLogs(thisFile.platform.db, { siteId: 'site-tx', count: 2, ageDays: 60 });
  await ensureLogPartitions(thisFile.platform.db, { logType: 'EMAIL_LOG', from: daysAgo(90), to: new Date() });
  const open = new pg.Client({ connectionString: thisFile.platform.config.databaseUrl });
  await open.connect();
  await open.query('begin');
  const held = await open.query(
    "insert into email.email_log (site_id, created_at, recipient, status) values ('site-tx', $1, 'held@example.test', 'SUCCESS') returning id",
    [daysAgo(90)],
  );
  const heldId = Number(held.rows[0].id);
  const committedAfter = await seedEmailLogs(thisFile.platform.db, { siteId: 'site-tx', count: 1, ageDays: 90 });
  expect(committedAfter[0]).toBeGreaterThan(heldId);

  const run = await startRun('site-tx');
  await waitUntil('the export to be recorded', async () => (await partsOf('site-tx')).length > 0);
  // Written during the run, after the export's snapshot, with an old timestamp.
  const [duringId] = await seedEmailLogs(thisFile.platform.db, { siteId: 'site-tx', count: 1, ageDays: 400 });
  const outcome = await archiveOutcome(thisFile.platform, run.workflowId, run.runId);
  await open.query('commit');
  await open.end();

  expect(outcome.sites).toEqual([expect.objectContaining({ state: 'DONE', rowsExported: 3, rowsDeleted: 3 })]);
  expect(await remainingIds(thisFile.platform.db, 'site-tx')).toEqual([heldId, duringId]);
  expect(await downloadIds('site-tx')).toEqual([[...early, committedAfter[0]]]);
});

test('a run terminated after its upload was confirmed: the next run finishes those parts first; every row in exactly one CSV', async () => {
  const ids = await seedEmailLogs(thisFile.platform.db, { siteId: 'site-term', count: 4, ageDays: 45 });
  const { run: first, hold } = await runPinnedBeforeDelete('site-term');
  await thisFile.platform.temporal.client.workflow.getHandle(first.workflowId, first.runId).terminate('operator stopped it');
  await worker.kill();
  await dropWaitingSessions(thisFile.platform.config.databaseUrl);
  await hold.release();
  worker = await thisFile.platform.startWorker(['archival'], { API_INTERNAL_URL: thisFile.api.url });
  expect(await remainingIds(thisFile.platform.db, 'site-term')).toEqual(ids);
  const more = await seedEmailLogs(thisFile.platform.db, { siteId: 'site-term', count: 2, ageDays: 45 });

  const second = await startRun('site-term');
  const outcome = await archiveOutcome(thisFile.platform, second.workflowId, second.runId);

  expect(outcome.resumedParts).toBe(1);
  expect(outcome.sites).toEqual([expect.objectContaining({ state: 'DONE', rowsExported: 2, rowsDeleted: 2 })]);
  expect(await remainingIds(thisFile.platform.db, 'site-term')).toEqual([]);
  const files = await downloadIds('site-term');
  expect(files).toHaveLength(2);
  expect(files.flat().sort((a, b) => a - b)).toEqual([...ids, ...more]);
});

test('a site with more rows than a part holds is split into consecutive parts _001, _002, … in id order', async () => {
  const ids = await seedEmailLogs(thisFile.platform.db, { siteId: 'site-parts', count: 5, ageDays: 70 });
  const run = await startRun('site-parts', 2);
  const outcome = await archiveOutcome(thisFile.platform, run.workflowId, run.runId);

  expect(outcome.sites).toEqual([
    expect.objectContaining({ state: 'DONE', rowsExported: 5, rowsDeleted: 5, assetIds: [expect.any(String), expect.any(String), expect.any(String)] }),
  ]);
  const parts = await partsOf('site-parts');
  expect(parts.map((p) => [p.part_no, Number(p.row_count), Number(p.min_id), Number(p.max_id)]).sort()).toEqual([
    [1, 2, ids[0], ids[1]],
    [2, 2, ids[2], ids[3]],
    [3, 1, ids[4], ids[4]],
  ]);
  expect(
    parts
      .map((p) => p.file_name)
      .sort()
      .map((name) => name.slice(-8)),
  ).toEqual(['_001.csv', '_002.csv', '_003.csv']);
  expect((await downloadIds('site-parts')).sort((a, b) => a[0] - b[0])).toEqual([[ids[0], ids[1]], [ids[2], ids[3]], [ids[4]]]);
});
