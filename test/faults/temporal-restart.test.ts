import fs from 'node:fs';
import { WorkflowFailedError } from '@temporalio/client';
import { startWorkflow } from '../../temporal-config/client';
import { archiveLogs } from '../../workflows/archival/archive-logs';
import { archiveRunWorkflowId, ArchiveRunProgress } from '../../workflows/archival/definitions';
import { attachPlatform, TestPlatform } from '../support/platform';
import { withOwnTemporal } from '../support/own-temporal';
import { waitUntil } from '../support/wait';
import { archiveFileIds, globalRetention } from '../archival/harness';
import { remainingIds, seedManyEmailLogs } from '../archival/seed';
import { fairShareOf } from '../../domain/fairness';

/**
 * The Temporal dev server restarted (on its database file, as `npm start` runs it) in the middle of an
 * archive run: the run goes on where it was and finishes as if nothing had happened. Stopped as a service
 * manager stops it, and killed as a crash would: its SQLite syncs the disk at checkpoints, not at every
 * commit (decision 030), and must come back on the file the kill left. (A pending approval across a restart
 * is test/approvals/publish-approval.test.ts.)
 */
const ROWS = 200000;

let platform: TestPlatform;
let retentionSet = false;

beforeAll(async () => {
  platform = await attachPlatform();
});

afterAll(async () => {
  await platform?.close();
});

test.each([
  { how: 'stop', done: 'stopped (SIGTERM)' },
  { how: 'kill', done: 'killed (SIGKILL)' },
] as const)(
  `the Temporal dev server $done and started again in the middle of a ${ROWS}-row archive run: the run completes, every row archived exactly once`,
  async ({ how }) => {
    const site = `site-temporal-${how}`;
    const seeded = await seedManyEmailLogs(platform.db, { databaseUrl: platform.config.databaseUrl, siteId: site, count: ROWS });

    await withOwnTemporal(platform, ['archival'], async (own) => {
      // Decision 030: the server writes ahead of its database file, and syncs the disk only at checkpoints.
      expect(fs.existsSync(`${own.dbFile}-wal`)).toBe(true);
      const admin = await platform.token({ sub: 'ada', roles: ['ADMIN'] });
      // The policy is the file's database's: whichever test runs first sets it.
      if (!retentionSet) await globalRetention(own.api.url, admin, 'EMAIL_LOG');
      retentionSet = true;
      const run = await startWorkflow(own.temporal, archiveLogs, {
        workflowId: archiveRunWorkflowId('EMAIL_LOG'),
        taskQueue: 'archival',
        args: [{ logType: 'EMAIL_LOG', siteId: site, heartbeatTimeout: '10 seconds', maxRowsPerPart: 20000 }],
        priority: fairShareOf('archiveRun', site),
      });
      await waitUntil(
        'the first part of the run to be exported',
        async () => {
          const parts = await platform.db('settings.archive_part').where({ site_id: site }).count<{ n: string }[]>({ n: '*' });
          return Number(parts[0].n) >= 1;
        },
        { timeoutMs: 120000, intervalMs: 50 },
      );
      const stoppedAt = Date.now();
      await own.restartTemporal(how);
      const downMs = Date.now() - stoppedAt;

      const outcome = (await own.temporal.client.workflow
        .getHandle(run.workflowId, run.runId)
        .result()
        .catch((error: unknown) => {
          throw error instanceof WorkflowFailedError ? new Error(`the run failed: ${error.cause?.message}`) : error;
        })) as ArchiveRunProgress;
      expect(outcome.status).toBe('COMPLETED');
      expect(outcome.sites).toEqual([expect.objectContaining({ siteId: site, state: 'DONE', rowsExported: ROWS, rowsDeleted: ROWS })]);
      expect(await remainingIds(platform.db, site)).toEqual([]);
      const archived = (await archiveFileIds(platform, own.api.url, site)).flat();
      expect([...archived].sort((a, b) => a - b)).toEqual(seeded);
      console.log(
        `temporal ${how} mid-archive: down ${downMs} ms; ${archived.length} rows archived, ${archived.length - new Set(archived).size} twice, none left`,
      );
    });
  },
  600000,
);
