import * as wf from '@temporalio/workflow';
import type { ArchivalActivities } from '../../activities/archival';
import { MAX_ROWS_PER_PART } from '../../domain/archival';
import { JobOutcome } from '../../domain/job-log';
import { ArchiveRunInput, ArchiveRunProgress, archiveProgressQuery, SiteProgress } from './definitions';
import { archiveRunInputProblem } from '../../domain/archival';
import { refuseInvalidInput } from '../valid-input';

const DAY_MS = 24 * 60 * 60 * 1000;

function activities(heartbeatTimeout: string) {
  const quickDb = wf.proxyActivities<ArchivalActivities>({
    startToCloseTimeout: '1 minute',
    retry: { maximumAttempts: 5, initialInterval: '1 second' },
  });
  const longTransfer = wf.proxyActivities<ArchivalActivities>({
    startToCloseTimeout: '2 hours',
    heartbeatTimeout,
    retry: { maximumAttempts: 4, initialInterval: '2 seconds', backoffCoefficient: 2 },
  });
  return {
    listUnfinishedParts: quickDb.listUnfinishedParts,
    listSitesWithRows: quickDb.listSitesWithRows,
    resolveSiteRetention: quickDb.resolveSiteRetention,
    countArchivable: quickDb.countArchivable,
    recordSiteJobLog: quickDb.recordSiteJobLog,
    exportSiteParts: longTransfer.exportSiteParts,
    uploadPart: longTransfer.uploadPart,
    deleteArchivedRows: longTransfer.deleteArchivedRows,
  };
}

/**
 * Runs started before this marker wrote a job-log row only for sites that archived rows or failed; from it
 * on, every site of a run writes one: archived (even none), skipped with its reason, dry run, or failed.
 */
export const JOB_LOG_EVERY_SITE = 'job-log-every-site';

function reason(error: unknown): string {
  if (error instanceof wf.ActivityFailure && error.cause) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * One archive run of one log type. First it finishes the parts earlier runs recorded but did not finish;
 * then, site by site: resolve the retention, export the rows older than the cutoff (recording every part
 * before any upload), upload each part and wait for the sink's confirmation, and only then delete exactly
 * the exported rows. A site that fails deletes nothing unconfirmed and does not stop the others; the run
 * fails at the end if any site failed.
 */
export async function archiveLogs(input: ArchiveRunInput): Promise<ArchiveRunProgress> {
  refuseInvalidInput(archiveRunInputProblem(input));
  const act = activities(input.heartbeatTimeout ?? '1 minute');
  const { workflowId, runId } = wf.workflowInfo();
  const runStart = Date.now();
  const progress: ArchiveRunProgress = {
    workflowId,
    logType: input.logType,
    dryRun: input.dryRun ?? false,
    status: 'RUNNING',
    startedAt: new Date(runStart).toISOString(),
    closedAt: null,
    resumedParts: 0,
    sites: [],
  };
  wf.setHandler(archiveProgressQuery, () => progress);
  const logEverySite = wf.patched(JOB_LOG_EVERY_SITE);
  const logSite = (site: SiteProgress, outcome: Exclude<JobOutcome, 'RUNNING'>, why: string | null) =>
    act.recordSiteJobLog({
      workflowId,
      runId,
      logType: input.logType,
      siteId: site.siteId,
      status: outcome,
      startedAt: progress.startedAt,
      rowsExported: site.rowsExported,
      rowsDeleted: site.rowsDeleted,
      error: why,
    });

  const blockedSites = new Map<string, string>();
  if (!input.dryRun) {
    for (const part of await act.listUnfinishedParts({ logType: input.logType, siteId: input.siteId })) {
      if (blockedSites.has(part.siteId)) continue;
      try {
        if (part.state === 'EXPORTED') await act.uploadPart({ partId: part.partId });
        await act.deleteArchivedRows({ partId: part.partId });
        progress.resumedParts += 1;
      } catch (error) {
        blockedSites.set(part.siteId, `an earlier run's part could not be finished: ${reason(error)}`);
      }
    }
  }

  const siteIds = await act.listSitesWithRows({ logType: input.logType, siteId: input.siteId });
  for (const blocked of blockedSites.keys()) if (!siteIds.includes(blocked)) siteIds.push(blocked);
  progress.sites = siteIds.map((siteId) => ({
    siteId,
    cutoff: null,
    rowsExported: 0,
    rowsDeleted: 0,
    assetId: null,
    assetIds: [],
    state: 'PENDING',
    error: null,
  }));

  // A few sites at a time: one site's export overlaps another's upload and delete.
  const queue = [...progress.sites];
  const lane = async () => {
    for (let site = queue.shift(); site; site = queue.shift()) {
      const blocked = blockedSites.get(site.siteId);
      if (blocked) {
        site.state = 'FAILED';
        site.error = blocked;
        if (logEverySite) await logSite(site, 'FAILED', blocked);
      } else {
        await archiveSite(site);
      }
    }
  };
  await Promise.all(Array.from({ length: input.siteConcurrency ?? 2 }, lane));

  progress.status = progress.sites.some((site) => site.state === 'FAILED') ? 'FAILED' : 'COMPLETED';
  progress.closedAt = new Date(Date.now()).toISOString();
  if (progress.status === 'FAILED') {
    const failed = progress.sites.filter((site) => site.state === 'FAILED').map((site) => site.siteId);
    throw wf.ApplicationFailure.nonRetryable(`archive of ${input.logType} failed for site(s) ${failed.join(', ')}`, 'ARCHIVE_SITES_FAILED', progress);
  }
  return progress;

  async function archiveSite(site: SiteProgress): Promise<void> {
    const retention = await act.resolveSiteRetention({ logType: input.logType, siteId: site.siteId });
    if (!retention.enabled || retention.retentionDays === null) {
      site.state = 'SKIPPED';
      if (logEverySite) {
        await logSite(
          site,
          'SKIPPED',
          retention.source === 'NONE' ? 'no retention policy applies to the site' : `the ${retention.source.toLowerCase()} retention policy is disabled`,
        );
      }
      return;
    }
    const cutoff = new Date(runStart - retention.retentionDays * DAY_MS).toISOString();
    site.cutoff = cutoff;
    if (input.dryRun) {
      site.rowsExported = await act.countArchivable({ logType: input.logType, siteId: site.siteId, cutoff });
      site.state = 'DRY_RUN';
      if (logEverySite) await logSite(site, 'DRY_RUN', null);
      return;
    }
    try {
      site.state = 'EXPORTING';
      const parts = await act.exportSiteParts({
        workflowId,
        runId,
        logType: input.logType,
        siteId: site.siteId,
        cutoff,
        maxRowsPerPart: Math.min(input.maxRowsPerPart ?? MAX_ROWS_PER_PART, MAX_ROWS_PER_PART),
      });
      site.rowsExported = parts.reduce((sum, part) => sum + part.rowCount, 0);
      site.state = 'UPLOADING';
      for (const part of parts) {
        const uploaded = await act.uploadPart({ partId: part.partId });
        site.assetIds.push(uploaded.assetId);
        site.assetId ??= uploaded.assetId;
      }
      site.state = 'DELETING';
      for (const part of parts) site.rowsDeleted += (await act.deleteArchivedRows({ partId: part.partId })).rowsDeleted;
      site.state = 'DONE';
    } catch (error) {
      site.state = 'FAILED';
      site.error = reason(error);
    }
    if (logEverySite || site.rowsExported > 0 || site.state === 'FAILED') {
      await logSite(site, site.state === 'DONE' ? 'SUCCESS' : 'FAILED', site.error);
    }
  }
}
