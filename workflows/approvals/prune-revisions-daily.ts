import * as wf from '@temporalio/workflow';
import type { ApprovalsActivities } from '../../activities/approvals';
import { JobNames } from '../../domain/job-log';

const act = wf.proxyActivities<ApprovalsActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '5 seconds', maximumInterval: '1 minute', backoffCoefficient: 2, maximumAttempts: 5 },
});

/**
 * The revision retention schedule's run: every rule prunes what it covers (what writes could not: a
 * revision a release, an approval or a schedule stopped naming since its item's last write), and the run
 * is written to the scheduler job log, a failure too.
 */
export async function pruneRevisionsDaily(): Promise<{ rules: number; pruned: number }> {
  const startedAt = new Date(Date.now()).toISOString();
  const jobKey = wf.workflowInfo().runId;
  try {
    const result = await act.pruneRevisionsByRule();
    await act.recordJobRun({
      jobName: JobNames.revisionRetention,
      jobKey,
      outcome: 'SUCCESS',
      startedAt,
      rowsAffected: result.pruned,
      message: `${result.pruned} revision(s) pruned under ${result.rules} rule(s)`,
    });
    return result;
  } catch (error) {
    await act.recordJobRun({
      jobName: JobNames.revisionRetention,
      jobKey,
      outcome: 'FAILED',
      startedAt,
      rowsAffected: 0,
      message: `revision retention failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 2000),
    });
    throw error;
  }
}
