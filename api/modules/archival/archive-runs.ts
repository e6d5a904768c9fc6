import { ApplicationFailure, QueryDefinition, WorkflowFailedError } from '@temporalio/client';
import { describeRun, TemporalHandle } from '../../../temporal-config/client';
import { ErrorCode, notFound } from '../../../lib/errors';
import { LogType } from '../../../domain/archival';
import {
  ArchiveRestoreReport,
  ArchiveRunProgress,
  archiveProgressQuery,
  restoreNotYetRead,
  restoreProgressQuery,
  RunStatus,
} from '../../../workflows/archival/definitions';

interface Reported {
  status: RunStatus;
  closedAt: string | null;
}

/**
 * A run's report: the progress query while it runs, its result (or its failure's details) once closed, and
 * `fallback` for a run that can answer neither (terminated before its first task).
 */
async function runReport<R extends Reported>(
  temporal: TemporalHandle,
  workflowId: string,
  args: { query: QueryDefinition<R>; notFound: [ErrorCode, string]; fallback: (run: { status: RunStatus; startedAt: string; closedAt: string | null }) => R },
): Promise<R> {
  const handle = temporal.client.workflow.getHandle(workflowId);
  const description = await describeRun(temporal, workflowId);
  if (!description) throw notFound(args.notFound[1], args.notFound[0]);
  const status = description.status.name;
  if (status === 'COMPLETED') return (await handle.result()) as R;
  if (status === 'FAILED') {
    try {
      await handle.result();
    } catch (error) {
      const cause = error instanceof WorkflowFailedError ? error.cause : undefined;
      const details = cause instanceof ApplicationFailure ? (cause.details?.[0] as R | undefined) : undefined;
      if (details) return details;
    }
  }
  const closedAt = description.closeTime?.toISOString() ?? null;
  try {
    const progress = await handle.query(args.query);
    return status === 'RUNNING' ? progress : { ...progress, status: 'FAILED', closedAt };
  } catch {
    return args.fallback({ status: status === 'RUNNING' ? 'RUNNING' : 'FAILED', startedAt: description.startTime.toISOString(), closedAt });
  }
}

/** An archive run's report. */
export async function archiveRunReport(temporal: TemporalHandle, workflowId: string): Promise<ArchiveRunProgress> {
  return runReport(temporal, workflowId, {
    query: archiveProgressQuery,
    notFound: ['ARCHIVE_RUN_NOT_FOUND', `No archive run ${workflowId}.`],
    fallback: (run) => ({ workflowId, logType: workflowId.replace(/^archive:/, '') as LogType, dryRun: false, resumedParts: 0, sites: [], ...run }),
  });
}

/** An archive restore's report: the file, and how many of its rows were inserted and skipped. */
export async function archiveRestoreReport(temporal: TemporalHandle, workflowId: string): Promise<ArchiveRestoreReport> {
  return runReport(temporal, workflowId, {
    query: restoreProgressQuery,
    notFound: ['ARCHIVE_RESTORE_NOT_FOUND', `No archive restore ${workflowId}.`],
    fallback: (run) => ({ ...restoreNotYetRead(workflowId, workflowId.replace(/^archive-restore:/, '')), ...run }),
  });
}
