import { temporal as proto } from '@temporalio/proto';
import { startWorkflow } from '../../temporal-config/client';
import { archiveLogs } from '../../workflows/archival/archive-logs';
import { archiveRunWorkflowId } from '../../workflows/archival/definitions';
import { call } from '../support/http';
import { platformWithApi, RunningWorker } from '../support/platform';
import { waitUntil } from '../support/wait';
import { archiveFileIds, archiveOutcome, dropWaitingSessions, holdDeletes, sessionsWaitingOnLocks, globalRetention } from './harness';
import { remainingIds, seedEmailLogs } from './seed';
import { fairShareOf } from '../../domain/fairness';

/**
 * Workers scaled out (issue #19, point 5): two archival workers on one task queue share one run of many
 * sites; nothing is archived twice, and killing one while it holds an activity loses nothing.
 */
const thisFile = platformWithApi();
let workers: RunningWorker[];
let admin: string;

/**
 * A site whose policy is disabled, with rows at the times of the old rows seeded here: their month is then
 * never past retention for every site in it, so the runs go by the row path (whose deletes a test here
 * holds) on any date, not whole with the month, which fixed ages allow on some days of each month.
 */
const ROW_PATH_ANCHOR = 'row-path-anchor';

beforeAll(async () => {
  workers = [
    await thisFile.platform.startWorker(['archival'], { API_INTERNAL_URL: thisFile.api.url }),
    await thisFile.platform.startWorker(['archival'], { API_INTERNAL_URL: thisFile.api.url }),
  ];
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  await globalRetention(thisFile.api.url, admin, 'EMAIL_LOG');
  const anchor = { logType: 'EMAIL_LOG', siteId: ROW_PATH_ANCHOR, retentionDays: 30, enabled: false };
  expect((await call(thisFile.api.url, 'POST', '/api/settings/archive-policies', { token: admin, body: anchor })).status).toBe(201);
});

/** Each worker's identity as Temporal records it on the activity tasks it takes (the SDK's pid@host). */
const identityOf = (worker: RunningWorker) => `${worker.child.pid}@`;

async function seedSites(prefix: string, count: number) {
  const sites = Array.from({ length: count }, (_, index) => `${prefix}-${String(index + 1).padStart(2, '0')}`);
  const old = new Map<string, number[]>();
  const recent = new Map<string, number[]>();
  await seedEmailLogs(thisFile.platform.db, { siteId: ROW_PATH_ANCHOR, count: 3, ageDays: 40 });
  for (const siteId of sites) {
    old.set(siteId, await seedEmailLogs(thisFile.platform.db, { siteId, count: 3, ageDays: 40 }));
    recent.set(siteId, await seedEmailLogs(thisFile.platform.db, { siteId, count: 1, ageDays: 2 }));
  }
  return { sites, old, recent };
}

const startRun = () =>
  startWorkflow(thisFile.platform.temporal, archiveLogs, {
    workflowId: archiveRunWorkflowId('EMAIL_LOG'),
    taskQueue: 'archival',
    args: [{ logType: 'EMAIL_LOG', heartbeatTimeout: '3 seconds' }],
    priority: fairShareOf('archiveRun'),
  });

/** The activity tasks of a run as its history records them: type, attempt, and which worker took each. */
async function activityStarts(workflowId: string, runId: string) {
  const history = await thisFile.platform.temporal.client.workflow.getHandle(workflowId, runId).fetchHistory();
  const scheduled = new Map<string, string>();
  const starts: Array<{ type: string; attempt: number; identity: string }> = [];
  for (const event of history.events ?? []) {
    if (event.eventType === proto.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
      scheduled.set(String(event.eventId), event.activityTaskScheduledEventAttributes!.activityType!.name!);
    if (event.eventType === proto.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED) {
      const started = event.activityTaskStartedEventAttributes!;
      starts.push({ type: scheduled.get(String(started.scheduledEventId)) ?? '?', attempt: started.attempt ?? 1, identity: started.identity ?? '' });
    }
  }
  return starts;
}

/** Every archived id of these sites, from the CSV files they got, as a list (a row archived twice appears twice). */
async function archivedIds(sites: string[]): Promise<number[]> {
  const files = await Promise.all(sites.map((siteId) => archiveFileIds(thisFile.platform, thisFile.api.url, siteId)));
  return files.flat(2).sort((a, b) => a - b);
}

test('two archival workers share one run of 16 sites: both take its activities, and every old row is archived exactly once', async () => {
  const { sites, old, recent } = await seedSites('fleet', 16);
  const run = await startRun();
  const report = await archiveOutcome(thisFile.platform, run.workflowId, run.runId);
  expect(report.status).toBe('COMPLETED');
  for (const siteId of sites)
    expect(report.sites.find((site) => site.siteId === siteId)).toEqual(expect.objectContaining({ state: 'DONE', rowsExported: 3, rowsDeleted: 3 }));

  const starts = await activityStarts(run.workflowId, run.runId);
  const byWorker = workers.map((worker) => starts.filter((start) => start.identity.startsWith(identityOf(worker))).length);
  expect(byWorker.every((count) => count > 0)).toBe(true);
  expect(byWorker[0] + byWorker[1]).toBe(starts.length);

  expect(await archivedIds(sites)).toEqual([...old.values()].flat().sort((a, b) => a - b));
  for (const siteId of sites) expect(await remainingIds(thisFile.platform.db, siteId)).toEqual(recent.get(siteId));
});

test('the worker holding a delete is killed mid-run: the other takes the activity over, the run completes, and every row is archived exactly once', async () => {
  const { sites, old, recent } = await seedSites('second', 8);
  const hold = await holdDeletes(thisFile.platform.config.databaseUrl, 'email.email_log');
  const run = await startRun();
  const handle = thisFile.platform.temporal.client.workflow.getHandle(run.workflowId, run.runId);
  // A delete is in flight, waiting on the lock: which worker holds it, Temporal says.
  const holder = await waitUntil('a delete to be in flight on one of the workers', async () => {
    if ((await sessionsWaitingOnLocks(thisFile.platform.config.databaseUrl)) === 0) return null;
    const pending = (await handle.describe()).raw.pendingActivities ?? [];
    const deleting = pending.find((activity) => activity.activityType?.name === 'deleteArchivedRows' && activity.lastWorkerIdentity);
    return deleting ? workers.find((worker) => deleting.lastWorkerIdentity!.startsWith(identityOf(worker))) : null;
  });
  const survivor = workers.find((worker) => worker !== holder)!;
  await holder.kill();
  // PostgreSQL notices the killed worker's waiting session only later; end it as it would.
  await dropWaitingSessions(thisFile.platform.config.databaseUrl);
  await hold.release();

  const report = await archiveOutcome(thisFile.platform, run.workflowId, run.runId);
  expect(report.status).toBe('COMPLETED');
  for (const siteId of sites)
    expect(report.sites.find((site) => site.siteId === siteId)).toEqual(expect.objectContaining({ state: 'DONE', rowsExported: 3, rowsDeleted: 3 }));
  const retried = (await activityStarts(run.workflowId, run.runId)).filter((start) => start.type === 'deleteArchivedRows' && start.attempt > 1);
  expect(retried.length).toBeGreaterThan(0);
  expect(retried.every((start) => start.identity.startsWith(identityOf(survivor)))).toBe(true);

  expect(await archivedIds(sites)).toEqual([...old.values()].flat().sort((a, b) => a - b));
  for (const siteId of sites) expect(await remainingIds(thisFile.platform.db, siteId)).toEqual(recent.get(siteId));
});
