import * as wf from '@temporalio/workflow';
import type { ArchivalActivities } from '../../activities/archival';
import { JobNames } from '../../domain/job-log';
import { ArchiveRestoreInput, ArchiveRestoreReport, restoreNotYetRead, restoreProgressQuery } from './definitions';
import { archiveRestoreInputProblem } from '../../domain/archival';
import { refuseInvalidInput } from '../valid-input';

const quickDb = wf.proxyActivities<ArchivalActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 5, initialInterval: '1 second' },
});
const transfer = wf.proxyActivities<ArchivalActivities>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '1 minute',
  retry: { maximumAttempts: 4, initialInterval: '2 seconds', backoffCoefficient: 2 },
});

/**
 * Loads one archive file back into its log table: the file must hash to what its archive run recorded,
 * rows keep their ids, and rows already there are skipped. The file stays where it is. The outcome, either
 * way, is a job-log row of the file's site.
 */
export async function restoreArchive(input: ArchiveRestoreInput): Promise<ArchiveRestoreReport> {
  refuseInvalidInput(archiveRestoreInputProblem(input));
  const { workflowId, runId } = wf.workflowInfo();
  const report: ArchiveRestoreReport = {
    ...restoreNotYetRead(workflowId, input.assetId),
    status: 'RUNNING',
    startedAt: new Date(Date.now()).toISOString(),
    closedAt: null,
  };
  wf.setHandler(restoreProgressQuery, () => report);

  let failure: wf.ActivityFailure | undefined;
  try {
    const file = await quickDb.describeArchiveFile({ assetId: input.assetId });
    Object.assign(report, { logType: file.logType, siteId: file.siteId, fileName: file.fileName });
    const restored = await transfer.restoreArchiveFile({ assetId: input.assetId, runId });
    report.rowsInFile = restored.rowsInFile;
    report.rowsInserted = restored.rowsInserted;
    report.rowsSkipped = restored.rowsInFile - restored.rowsInserted;
    report.status = 'COMPLETED';
  } catch (error) {
    if (!(error instanceof wf.ActivityFailure)) throw error;
    failure = error;
    report.status = 'FAILED';
    report.error = error.cause?.message ?? error.message;
  }
  report.closedAt = new Date(Date.now()).toISOString();

  await quickDb.recordJobRun({
    jobName: JobNames.archiveRestore,
    jobKey: runId,
    siteId: report.siteId ?? undefined,
    outcome: report.status === 'COMPLETED' ? 'SUCCESS' : 'FAILED',
    startedAt: report.startedAt,
    rowsAffected: report.rowsInserted,
    message:
      report.status === 'COMPLETED'
        ? `restored ${report.fileName} for ${input.requestedBy}: ${report.rowsInserted} rows inserted, ${report.rowsSkipped} already present`
        : `restore of asset ${input.assetId} for ${input.requestedBy} failed: ${report.error}`,
  });
  if (failure) {
    const type = failure.cause instanceof wf.ApplicationFailure ? failure.cause.type : null;
    throw wf.ApplicationFailure.nonRetryable(`restore of asset ${input.assetId} failed: ${report.error}`, type ?? 'INTERNAL_ERROR', report);
  }
  return report;
}
