import * as wf from '@temporalio/workflow';
import type { ArchivalActivities } from '../../activities/archival';
import { JobOutcome } from '../../domain/job-log';
import { ArchiveRunInput, ArchiveRunProgress, archiveProgressQuery, SiteProgress } from './definitions';

/**
 * Runs started before this marker wrote a job-log row only for sites that archived rows or failed; from it
 * on, every site of a run writes one: archived (even none), skipped with its reason, dry run, or failed.
 */
export const JOB_LOG_EVERY_SITE = 'job-log-every-site';

function archiveActivities(heartbeatTimeout: string) {
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

/** What the months archived whole took of one site: counted into the site's own progress and job-log row. */
export interface WholeMonthsOfSite {
  rowsExported: number;
  rowsDropped: number;
  assetIds: string[];
}

/** What an archive run knows while it runs, shared by its steps. */
export interface ArchiveRun {
  readonly input: ArchiveRunInput;
  readonly act: ReturnType<typeof archiveActivities>;
  readonly workflowId: string;
  readonly runId: string;
  /** When the run started: every site's cutoff is counted back from it. */
  readonly runStart: number;
  readonly progress: ArchiveRunProgress;
  readonly logEverySite: boolean;
  readonly wholeMonths: Map<string, WholeMonthsOfSite>;
}

/** The run's state, with its progress answered to the `progress` query. */
export function startArchiveRun(input: ArchiveRunInput): ArchiveRun {
  const act = archiveActivities(input.heartbeatTimeout ?? '1 minute');
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
  return { input, act, workflowId, runId, runStart, progress, logEverySite, wholeMonths: new Map() };
}

/** Writes the site's job-log row for this run. */
export function logSite(run: ArchiveRun, site: SiteProgress, outcome: Exclude<JobOutcome, 'RUNNING'>, why: string | null): Promise<void> {
  return run.act.recordSiteJobLog({
    workflowId: run.workflowId,
    runId: run.runId,
    logType: run.input.logType,
    siteId: site.siteId,
    status: outcome,
    startedAt: run.progress.startedAt,
    rowsExported: site.rowsExported,
    rowsDeleted: site.rowsDeleted,
    error: why,
  });
}
