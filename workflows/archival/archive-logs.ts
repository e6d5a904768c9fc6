import * as wf from '@temporalio/workflow';
import type { ArchivalActivities } from '../../activities/archival';
import { MAX_ROWS_PER_PART } from '../../domain/archival';
import { JobOutcome } from '../../domain/job-log';
import { ArchiveRunInput, ArchiveRunProgress, archiveProgressQuery, PartitionProgress, SiteProgress } from './definitions';
import { archiveRunInputProblem, retentionCutoff } from '../../domain/archival';
import { refuseInvalidInput } from '../valid-input';

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
    listUnfinishedPartitionArchives: quickDb.listUnfinishedPartitionArchives,
    listExpiredPartitions: quickDb.listExpiredPartitions,
    openPartitionArchive: quickDb.openPartitionArchive,
    exportSiteParts: longTransfer.exportSiteParts,
    uploadPart: longTransfer.uploadPart,
    deleteArchivedRows: longTransfer.deleteArchivedRows,
    exportPartitionParts: longTransfer.exportPartitionParts,
    detachArchivedPartition: longTransfer.detachArchivedPartition,
    dropArchivedPartition: longTransfer.dropArchivedPartition,
  };
}

/**
 * Runs started before this marker wrote a job-log row only for sites that archived rows or failed; from it
 * on, every site of a run writes one: archived (even none), skipped with its reason, dry run, or failed.
 */
export const JOB_LOG_EVERY_SITE = 'job-log-every-site';

/** Runs started before this marker archived row by row only; from it on, months past retention go whole first. */
export const PARTITION_DROP = 'partition-drop';

const monthNotStarted = (name: string): PartitionProgress => ({
  name,
  state: 'EXPORTING',
  rowsExported: 0,
  rowsDropped: 0,
  rowsReturned: 0,
  assetIds: [],
  error: null,
});

function reason(error: unknown): string {
  if (error instanceof wf.ActivityFailure && error.cause) return error.cause.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * One archive run of one log type. First it finishes the parts earlier runs recorded but did not finish.
 * Then, on a run of every site, each month of the log table that is past retention for every site in it is
 * archived whole: exported per site, every part uploaded and confirmed, the month detached, recorded and
 * dropped, with no row deleted (months an earlier run left half-way first). Then, site by site: resolve the
 * retention, export the rows older than the cutoff (recording every part before any upload), upload each part and wait for the sink's confirmation, and only then delete exactly
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

  /** What the months dropped whole took of each site: counted into the site's own progress and job-log row. */
  const wholeMonths = new Map<string, { rowsExported: number; rowsDropped: number; assetIds: string[] }>();
  const siteOfWholeMonths = (siteId: string) => {
    if (!wholeMonths.has(siteId)) wholeMonths.set(siteId, { rowsExported: 0, rowsDropped: 0, assetIds: [] });
    return wholeMonths.get(siteId)!;
  };
  const monthsGoWhole = !input.dryRun && !input.siteId && wf.patched(PARTITION_DROP);
  if (monthsGoWhole) {
    // Months an earlier run left half-way go first: a detached month's late rows are back before any row-path part deletes.
    progress.partitions = [];
    for (const unfinished of await act.listUnfinishedPartitionArchives({ logType: input.logType })) {
      progress.resumedParts += await archivePartition(unfinished);
    }
  }

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

  if (monthsGoWhole) {
    const expired = await act.listExpiredPartitions({ logType: input.logType, runStart, excludeSites: [...blockedSites.keys()] });
    for (const partition of expired) {
      const opened = await act.openPartitionArchive({ workflowId, runId, logType: input.logType, partition }).catch((error: unknown) => {
        progress.partitions!.push({ ...monthNotStarted(partition.name), state: 'FAILED', error: reason(error) });
        return null;
      });
      if (opened) await archivePartition(opened);
    }
  }

  const siteIds = await act.listSitesWithRows({ logType: input.logType, siteId: input.siteId });
  for (const blocked of blockedSites.keys()) if (!siteIds.includes(blocked)) siteIds.push(blocked);
  for (const siteId of wholeMonths.keys()) if (!siteIds.includes(siteId)) siteIds.push(siteId);
  progress.sites = siteIds.map((siteId) => {
    const whole = wholeMonths.get(siteId);
    return {
      siteId,
      cutoff: null,
      rowsExported: whole?.rowsExported ?? 0,
      rowsDeleted: whole?.rowsDropped ?? 0,
      assetId: whole?.assetIds[0] ?? null,
      assetIds: [...(whole?.assetIds ?? [])],
      state: 'PENDING',
      error: null,
    };
  });

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

  const failedMonths = (progress.partitions ?? []).filter((partition) => partition.state === 'FAILED').map((partition) => partition.name);
  progress.status = progress.sites.some((site) => site.state === 'FAILED') || failedMonths.length > 0 ? 'FAILED' : 'COMPLETED';
  progress.closedAt = new Date(Date.now()).toISOString();
  if (progress.status === 'FAILED') {
    const failed = progress.sites.filter((site) => site.state === 'FAILED').map((site) => site.siteId);
    const what = [failed.length > 0 ? `site(s) ${failed.join(', ')}` : '', failedMonths.length > 0 ? `month(s) ${failedMonths.join(', ')}` : ''].filter(
      Boolean,
    );
    throw wf.ApplicationFailure.nonRetryable(`archive of ${input.logType} failed for ${what.join(' and ')}`, 'ARCHIVE_SITES_FAILED', progress);
  }
  return progress;

  /** Archives one month whole; answers how many parts it finished (none when it failed). */
  async function archivePartition(archive: { partitionArchiveId: string; name: string }): Promise<number> {
    const month = monthNotStarted(archive.name);
    progress.partitions!.push(month);
    const { partitionArchiveId } = archive;
    try {
      const parts = await act.exportPartitionParts({ partitionArchiveId, maxRowsPerPart: input.maxRowsPerPart });
      month.rowsExported = parts.reduce((sum, part) => sum + part.rowCount, 0);
      month.state = 'UPLOADING';
      // Two uploads at a time; the assets are listed in the parts' order whichever finishes first.
      const assets = new Map<string, string>();
      const queue = [...parts];
      const lane = async () => {
        for (let part = queue.shift(); part; part = queue.shift()) assets.set(part.partId, (await act.uploadPart({ partId: part.partId })).assetId);
      };
      await Promise.all([lane(), lane()]);
      month.assetIds.push(...parts.map((part) => assets.get(part.partId)!));
      month.state = 'DETACHING';
      await act.detachArchivedPartition({ partitionArchiveId });
      month.state = 'DROPPING';
      const dropped = await act.dropArchivedPartition({ partitionArchiveId });
      month.rowsDropped = dropped.rowsDropped;
      month.rowsReturned = dropped.rowsReturned;
      month.state = 'DROPPED';
      for (const part of parts) {
        const site = siteOfWholeMonths(part.siteId);
        site.rowsExported += part.rowCount;
        site.assetIds.push(assets.get(part.partId)!);
      }
      for (const [siteId, rows] of Object.entries(dropped.bySite)) siteOfWholeMonths(siteId).rowsDropped += rows;
      return parts.length;
    } catch (error) {
      month.state = 'FAILED';
      month.error = reason(error);
      return 0;
    }
  }

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
    const cutoff = retentionCutoff(runStart, retention.retentionDays).toISOString();
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
      site.rowsExported += parts.reduce((sum, part) => sum + part.rowCount, 0);
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
