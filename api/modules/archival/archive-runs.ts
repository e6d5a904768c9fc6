import { ApplicationFailure, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { TemporalHandle } from '../../../temporal-config/client';
import { notFound } from '../../../lib/errors';
import { LogType } from '../../../domain/archival';
import { ArchiveRunProgress, archiveProgressQuery } from '../../../workflows/archival/definitions';

/** A run's report: the progress query while it runs, its result (or its failure's details) once closed. */
export async function archiveRunReport(temporal: TemporalHandle, workflowId: string): Promise<ArchiveRunProgress> {
  const handle = temporal.client.workflow.getHandle(workflowId);
  let description;
  try {
    description = await handle.describe();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) throw notFound(`No archive run ${workflowId}.`, 'ARCHIVE_RUN_NOT_FOUND');
    throw error;
  }
  const status = description.status.name;
  if (status === 'COMPLETED') return (await handle.result()) as ArchiveRunProgress;
  if (status === 'FAILED') {
    try {
      await handle.result();
    } catch (error) {
      const cause = error instanceof WorkflowFailedError ? error.cause : undefined;
      const details = cause instanceof ApplicationFailure ? (cause.details?.[0] as ArchiveRunProgress | undefined) : undefined;
      if (details) return details;
    }
  }
  try {
    const progress = await handle.query(archiveProgressQuery);
    return status === 'RUNNING' ? progress : { ...progress, status: 'FAILED', closedAt: description.closeTime?.toISOString() ?? null };
  } catch {
    return {
      workflowId,
      logType: workflowId.replace(/^archive:/, '') as LogType,
      dryRun: false,
      status: status === 'RUNNING' ? 'RUNNING' : 'FAILED',
      startedAt: description.startTime.toISOString(),
      closedAt: description.closeTime?.toISOString() ?? null,
      resumedParts: 0,
      sites: [],
    };
  }
}
