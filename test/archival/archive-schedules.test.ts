import { waitUntil, succeeds } from '../support/wait';
import { attachPlatform, TestPlatform } from '../support/platform';
import { recordNewestHistory } from '../support/histories';
import { LOG_TYPES } from '../../domain/archival';
import { archiveScheduleId } from '../../workflows/archival/definitions';
import { listLogPartitions, LOG_PARTITION_MONTHS_AHEAD } from '../../data/archival/log-partitions';
import { PLATFORM_FAIRNESS_KEY, PRIORITY } from '../../domain/fairness';

let platform: TestPlatform;

beforeAll(async () => {
  platform = await attachPlatform();
});

afterAll(async () => {
  await platform?.close();
});

async function archiveSchedules() {
  const found: string[] = [];
  for await (const schedule of platform.temporal.client.schedule.list()) found.push(schedule.scheduleId);
  return found.filter((id) => id.startsWith('archive-schedule:')).sort();
}

test("the archival worker creates one schedule per log type with ARCHIVE_CRON, its runs started at bulk priority under the platform's key; starting again does not duplicate, a new cron updates", async () => {
  const first = await platform.startWorker(['archival'], { ARCHIVE_CRON: '15 4 * * *' });
  const expected = LOG_TYPES.map(archiveScheduleId).sort();
  expect(await archiveSchedules()).toEqual(expected);
  const described = await platform.temporal.client.schedule.getHandle(archiveScheduleId('EMAIL_LOG')).describe();
  expect(described.action).toEqual(expect.objectContaining({ type: 'startWorkflow', workflowType: 'scheduledArchive', taskQueue: 'archival' }));
  expect(described.action.priority).toEqual(expect.objectContaining({ priorityKey: PRIORITY.bulk, fairnessKey: PLATFORM_FAIRNESS_KEY }));
  expect(described.spec.calendars).toEqual([expect.objectContaining({ hour: [{ start: 4, end: 4, step: 1 }], minute: [{ start: 15, end: 15, step: 1 }] })]);

  await platform.startWorker(['archival'], { ARCHIVE_CRON: '15 4 * * *' });
  expect(await archiveSchedules()).toEqual(expected);

  await first.stop();
  await platform.startWorker(['archival'], { ARCHIVE_CRON: '30 2 * * *' });
  expect(await archiveSchedules()).toEqual(expected);
  const updated = await platform.temporal.client.schedule.getHandle(archiveScheduleId('SCHEDULER_JOB_LOG')).describe();
  expect(updated.spec.calendars).toEqual([expect.objectContaining({ hour: [{ start: 2, end: 2, step: 1 }], minute: [{ start: 30, end: 30, step: 1 }] })]);
});

test('a scheduled trigger creates the month partitions ahead, then starts the run under archive:{LOG_TYPE}', async () => {
  await platform.startWorker(['archival']);
  // The worker's start created them; the farthest month is taken away again (empty), for the schedule to restore.
  const farthest = (await listLogPartitions(platform.db, 'INTEGRATION_LOG')).at(-1)!;
  const now = new Date();
  expect(farthest.from.getTime()).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + LOG_PARTITION_MONTHS_AHEAD, 1));
  await platform.db.raw(`drop table ${farthest.name}`);
  const handle = platform.temporal.client.schedule.getHandle(archiveScheduleId('INTEGRATION_LOG'));
  await handle.trigger();
  const run = platform.temporal.client.workflow.getHandle('archive:INTEGRATION_LOG');
  await waitUntil('the scheduled run to start archive:INTEGRATION_LOG', () => succeeds(run.describe()), { timeoutMs: 30000, intervalMs: 250 });
  const result = await run.result();
  expect(result).toEqual(expect.objectContaining({ logType: 'INTEGRATION_LOG', status: 'COMPLETED', sites: [] }));
  expect((await listLogPartitions(platform.db, 'INTEGRATION_LOG')).at(-1)).toEqual(farthest);
  await recordNewestHistory(platform.temporal, { workflowType: 'scheduledArchive', name: 'scheduled-archive-no-sites' });
});
