import * as wf from '@temporalio/workflow';
import { archiveLogs } from './archive-logs';
import { archiveRunWorkflowId, ScheduledArchiveInput } from './definitions';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { SearchAttributeKeys } from '../../domain/search-attributes';
import { scheduledArchiveInputProblem } from '../../domain/archival';
import { refuseInvalidInput } from '../valid-input';
import type { ArchivalActivities } from '../../activities/archival';

const partitions = wf.proxyActivities<ArchivalActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

export interface ScheduledArchiveResult {
  started: boolean;
  workflowId: string;
  runId: string | null;
}

/**
 * What the daily schedule starts. First the log table's month partitions ahead are created when missing (a
 * row of a month with none is refused). Schedules suffix their workflow ids with the time, so this starts the run
 * under the deterministic id `archive:{LOG_TYPE}` (the one-run-per-log-type lock) and leaves it running on
 * its own; when a run holds the id already, it skips.
 */
export async function scheduledArchive(input: ScheduledArchiveInput): Promise<ScheduledArchiveResult> {
  refuseInvalidInput(scheduledArchiveInputProblem(input));
  // Runs started before this step was added replay without it (scheduled-archive-no-sites-before-log-partitions-ahead).
  if (wf.patched('log-partitions-ahead')) {
    // A failure here does not cost the day's archive (a worker of the previous release lacks this activity):
    // every archival worker's start creates the months too, and the failed attempts are in this history.
    await partitions.createPartitionsAhead({ logType: input.logType }).catch((error: unknown) => {
      wf.log.warn('the log partitions ahead were not created; the archive run starts all the same', { logType: input.logType, error: String(error) });
    });
  }
  const workflowId = archiveRunWorkflowId(input.logType);
  try {
    const child = await wf.startChild(archiveLogs, {
      workflowId,
      args: [{ logType: input.logType }],
      parentClosePolicy: 'ABANDON',
      typedSearchAttributes: [{ key: SearchAttributeKeys.LogType, value: input.logType }],
    });
    return { started: true, workflowId, runId: child.firstExecutionRunId };
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return { started: false, workflowId, runId: null };
    throw error;
  }
}
