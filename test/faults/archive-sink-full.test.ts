import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startWorkflow } from '../../temporal-config/client';
import { archiveLogs } from '../../workflows/archival/archive-logs';
import { archiveRunWorkflowId } from '../../workflows/archival/definitions';
import { attachPlatform, RunningApi, TestPlatform } from '../support/platform';
import { archiveFileIds, archiveOutcome, globalRetention } from '../archival/harness';
import { remainingIds, seedEmailLogs } from '../archival/seed';
import { fairShareOf } from '../../domain/fairness';

/**
 * The archive sink's disk full: the folder the API keeps assets in is a small file system of its own (a
 * tmpfs with a size limit), filled by this test. The run must delete nothing whose upload failed, fail the
 * site saying ARCHIVE_SINK_FULL, and finish once space is freed, with nothing archived twice.
 */
const SITE = 'site-full';
// Within one insert's bind parameters (seedEmailLogs writes seven columns a row).
const ROWS = 9000;

let platform: TestPlatform;
let api: RunningApi;
let sinkDir: string;
let mounted = false;

beforeAll(async () => {
  platform = await attachPlatform();
  sinkDir = path.join(platform.env.DATA_DIR!, 'assets');
  fs.mkdirSync(sinkDir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', sinkDir], { stdio: 'pipe' });
    mounted = true;
  } catch (error) {
    throw new Error(
      `this test needs a small file system for the sink: mount -t tmpfs failed (${(error as { stderr?: Buffer }).stderr?.toString().trim() ?? error}); run the suite as root`,
      { cause: error },
    );
  }
  api = await platform.startApi();
  await platform.startWorker(['archival'], { API_INTERNAL_URL: api.url });
  const admin = await platform.token({ sub: 'ada', roles: ['ADMIN'] });
  await globalRetention(api.url, admin, 'EMAIL_LOG');
});

afterAll(async () => {
  // Unmounted first, lazily (a download's stream may still hold a file there for a moment): closing the
  // platform removes its data folder, which a mount point inside keeps busy.
  try {
    if (mounted) execFileSync('umount', ['--lazy', sinkDir]);
  } finally {
    await platform?.close();
  }
});

const run = () =>
  startWorkflow(platform.temporal, archiveLogs, {
    workflowId: archiveRunWorkflowId('EMAIL_LOG'),
    taskQueue: 'archival',
    args: [{ logType: 'EMAIL_LOG', siteId: SITE, heartbeatTimeout: '10 seconds', maxRowsPerPart: 3000 }],
    priority: fairShareOf('archiveRun', SITE),
  });

test('a full sink: the site fails with ARCHIVE_SINK_FULL and keeps every row; once space is freed the next run finishes, every row archived exactly once', async () => {
  const seeded = await seedEmailLogs(platform.db, { siteId: SITE, count: ROWS, ageDays: 60 });
  // Leave the sink less room than one part takes.
  const filler = path.join(sinkDir, 'filler');
  const free = () => fs.statfsSync(sinkDir).bavail * fs.statfsSync(sinkDir).bsize;
  fs.writeFileSync(filler, Buffer.alloc(free() - 64 * 1024));

  const first = await run();
  const failed = await archiveOutcome(platform, first.workflowId, first.runId);
  expect(failed.status).toBe('FAILED');
  expect(failed.sites).toEqual([
    expect.objectContaining({ siteId: SITE, state: 'FAILED', rowsDeleted: 0, error: expect.stringContaining('ARCHIVE_SINK_FULL') }),
  ]);
  expect(await remainingIds(platform.db, SITE)).toEqual(seeded);
  const [log] = await platform.db('settings.scheduler_job_log').where({ site_id: SITE }).orderBy('started_at');
  expect({ status: log.status, message: log.message }).toEqual({ status: 'FAILED', message: expect.stringContaining('ARCHIVE_SINK_FULL') });
  // Nothing half-written was left in the sink: only the filler.
  expect(fs.readdirSync(sinkDir, { recursive: true }).filter((name) => fs.statSync(path.join(sinkDir, String(name))).isFile())).toEqual(['filler']);

  fs.rmSync(filler);
  const second = await run();
  const done = await archiveOutcome(platform, second.workflowId, second.runId);
  expect(done.status).toBe('COMPLETED');
  expect(await remainingIds(platform.db, SITE)).toEqual([]);
  const archived = (await archiveFileIds(platform, api.url, SITE)).flat();
  expect([...archived].sort((a, b) => a - b)).toEqual(seeded);
  console.log(
    `archive sink full: ${ROWS} rows kept through the failed run, then ${archived.length} archived once each (${archived.length - new Set(archived).size} twice)`,
  );
}, 300000);
