import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ArchivalActivities } from '../../activities/archival';
import { timeSkippingEnvironment, workerWith } from '../../test/support/time-skipping';
import { ARCHIVE_RUN_WORKFLOW, ArchiveRunInput, ArchiveRunProgress, ArchiveRunWorkflow } from './definitions';

/**
 * The archive run's logic on the time-skipping test server: sites blocked by an earlier run's part, months
 * that fail, uploads that fail after their retries, and what each means for deletes and the job log. The
 * activities are stand-ins; the real ones against PostgreSQL and the sinks are tested in test/archival/.
 */
let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await timeSkippingEnvironment();
});
afterAll(async () => {
  await env?.teardown();
});

type Call = { name: string; args: any };

interface World {
  /** Parts an earlier run left, by site; a part of a site in `failingSites` cannot be finished. */
  unfinished?: { partId: string; siteId: string; state: 'EXPORTED' | 'CONFIRMED' }[];
  /** Months past retention for every site in them; a month in `failingMonths` fails its export. */
  expiredMonths?: string[];
  sites: string[];
  /** Sites (and months) whose uploads and exports always fail. */
  failingSites?: string[];
  failingMonths?: string[];
}

/** Stand-ins for the archival activities over a small world of sites, parts and months; each records its call. */
function standIns(world: World) {
  const calls: Call[] = [];
  const failing = (siteId: string) => world.failingSites?.includes(siteId) ?? false;
  const partSite = new Map<string, string>();
  for (const part of world.unfinished ?? []) partSite.set(part.partId, part.siteId);
  const recorded =
    (name: string, answer: (args: any) => unknown) =>
    async (args: any): Promise<any> => {
      calls.push({ name, args });
      return answer(args);
    };
  const activities: Partial<Record<keyof ArchivalActivities, (args: any) => Promise<unknown>>> = {
    listUnfinishedPartitionArchives: recorded('listUnfinishedPartitionArchives', () => []),
    listUnfinishedParts: recorded('listUnfinishedParts', () => (world.unfinished ?? []).map((part) => ({ ...part, rowCount: 5 }))),
    listExpiredPartitions: recorded('listExpiredPartitions', () =>
      (world.expiredMonths ?? []).map((name) => ({ name, from: '2026-01-01', to: '2026-02-01', siteIds: world.sites })),
    ),
    openPartitionArchive: recorded('openPartitionArchive', ({ partition }) => ({ partitionArchiveId: `archive-of-${partition.name}`, name: partition.name })),
    exportPartitionParts: recorded('exportPartitionParts', ({ partitionArchiveId }) => {
      const month = String(partitionArchiveId).replace('archive-of-', '');
      if (world.failingMonths?.includes(month)) throw ApplicationFailure.nonRetryable(`the export of ${month} failed`);
      return world.sites.map((siteId) => {
        partSite.set(`${month}-${siteId}`, siteId);
        return { partId: `${month}-${siteId}`, siteId, rowCount: 100 };
      });
    }),
    detachArchivedPartition: recorded('detachArchivedPartition', () => undefined),
    dropArchivedPartition: recorded('dropArchivedPartition', () => ({
      rowsDropped: 100 * world.sites.length,
      rowsReturned: 0,
      bySite: Object.fromEntries(world.sites.map((siteId) => [siteId, 100])),
    })),
    listSitesWithRows: recorded('listSitesWithRows', () => world.sites),
    resolveSiteRetention: recorded('resolveSiteRetention', () => ({ enabled: true, retentionDays: 30, source: 'SITE' })),
    exportSiteParts: recorded('exportSiteParts', ({ siteId }) => {
      partSite.set(`rows-${siteId}`, siteId);
      return [{ partId: `rows-${siteId}`, rowCount: 10 }];
    }),
    uploadPart: recorded('uploadPart', ({ partId }) => {
      // Not non-retryable: the run's own retry policy is under test too.
      if (failing(partSite.get(partId)!)) throw new Error(`the sink refused ${partId}`);
      return { assetId: `asset-${partId}` };
    }),
    deleteArchivedRows: recorded('deleteArchivedRows', () => ({ rowsDeleted: 10 })),
    recordSiteJobLog: recorded('recordSiteJobLog', () => undefined),
    countArchivable: recorded('countArchivable', () => 42),
  };
  return { activities, calls };
}

async function archive(activities: object, input: Partial<ArchiveRunInput> = {}): Promise<{ progress: ArchiveRunProgress; failed: boolean }> {
  const { worker, taskQueue } = await workerWith(env, activities);
  return worker.runUntil(
    env.client.workflow
      .execute<ArchiveRunWorkflow>(ARCHIVE_RUN_WORKFLOW, { taskQueue, workflowId: randomUUID(), args: [{ logType: 'EMAIL_LOG', ...input }] })
      .then(
        (progress) => ({ progress, failed: false }),
        (error: unknown) => {
          if (!(error instanceof WorkflowFailedError) || !(error.cause instanceof ApplicationFailure)) throw error;
          expect(error.cause.type).toBe('ARCHIVE_SITES_FAILED');
          return { progress: error.cause.details![0] as ArchiveRunProgress, failed: true };
        },
      ),
  );
}

const named = (calls: Call[], name: string) => calls.filter((call) => call.name === name).map((call) => call.args);

test('a site whose earlier part cannot be finished is blocked: none of its rows deleted, left out of whole months, failed in the job log; the others archive', async () => {
  const { activities, calls } = standIns({
    sites: ['site-a', 'site-b'],
    unfinished: [{ partId: 'left-b', siteId: 'site-b', state: 'EXPORTED' }],
    failingSites: ['site-b'],
    expiredMonths: [],
  });
  const { progress, failed } = await archive(activities);
  expect(failed).toBe(true);
  const bySite = Object.fromEntries(progress.sites.map((site) => [site.siteId, site]));
  expect(bySite['site-a']).toMatchObject({ state: 'DONE', rowsExported: 10, rowsDeleted: 10 });
  expect(bySite['site-b'].state).toBe('FAILED');
  expect(bySite['site-b'].error).toMatch(/an earlier run's part could not be finished: the sink refused left-b/);
  // The blocked part was tried with its retries, and nothing of site B was deleted or exported anew.
  expect(named(calls, 'uploadPart').filter((args) => args.partId === 'left-b')).toHaveLength(4);
  expect(named(calls, 'deleteArchivedRows').map((args) => args.partId)).toEqual(['rows-site-a']);
  expect(named(calls, 'exportSiteParts').map((args) => args.siteId)).toEqual(['site-a']);
  expect(named(calls, 'listExpiredPartitions')[0].excludeSites).toEqual(['site-b']);
  expect(named(calls, 'recordSiteJobLog').map((args) => [args.siteId, args.status])).toEqual(
    expect.arrayContaining([
      ['site-a', 'SUCCESS'],
      ['site-b', 'FAILED'],
    ]),
  );
});

test('a month whose export fails is FAILED and fails the run; the next month and the row path still go, and nothing of it is dropped', async () => {
  const { activities, calls } = standIns({ sites: ['site-a'], expiredMonths: ['2026_01', '2026_02'], failingMonths: ['2026_01'] });
  const { progress, failed } = await archive(activities);
  expect(failed).toBe(true);
  expect(progress.partitions!.map((month) => [month.name, month.state])).toEqual([
    ['2026_01', 'FAILED'],
    ['2026_02', 'DROPPED'],
  ]);
  expect(named(calls, 'detachArchivedPartition').map((args) => args.partitionArchiveId)).toEqual(['archive-of-2026_02']);
  expect(named(calls, 'dropArchivedPartition').map((args) => args.partitionArchiveId)).toEqual(['archive-of-2026_02']);
  // The site's own progress counts the month dropped whole and its rows archived one by one.
  expect(progress.sites).toEqual([expect.objectContaining({ siteId: 'site-a', state: 'DONE', rowsExported: 110, rowsDeleted: 110 })]);
});

test('an upload that fails after its retries leaves every row of that site in place; the run fails naming the site', async () => {
  const { activities, calls } = standIns({ sites: ['site-a', 'site-b', 'site-c'], failingSites: ['site-b'] });
  const { progress, failed } = await archive(activities, { siteConcurrency: 2 });
  expect(failed).toBe(true);
  expect(progress.sites.map((site) => [site.siteId, site.state])).toEqual([
    ['site-a', 'DONE'],
    ['site-b', 'FAILED'],
    ['site-c', 'DONE'],
  ]);
  expect(named(calls, 'uploadPart').filter((args) => args.partId === 'rows-site-b')).toHaveLength(4);
  expect(
    named(calls, 'deleteArchivedRows')
      .map((args) => args.partId)
      .sort(),
  ).toEqual(['rows-site-a', 'rows-site-c']);
});

test('a dry run counts per site and changes nothing: no part finished, no month touched, no export, no delete', async () => {
  const { activities, calls } = standIns({
    sites: ['site-a'],
    unfinished: [{ partId: 'left-a', siteId: 'site-a', state: 'EXPORTED' }],
    expiredMonths: ['2026_01'],
  });
  const { progress, failed } = await archive(activities, { dryRun: true });
  expect(failed).toBe(false);
  expect(progress.sites).toEqual([expect.objectContaining({ siteId: 'site-a', state: 'DRY_RUN', rowsExported: 42 })]);
  const touched = calls
    .map((call) => call.name)
    .filter((name) => !['listSitesWithRows', 'resolveSiteRetention', 'countArchivable', 'recordSiteJobLog'].includes(name));
  expect(touched).toEqual([]);
});
