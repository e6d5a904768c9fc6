import { writeJobLog } from '../../data/scheduler-job-log';
import { LogType } from '../../domain/archival';
import { ArchivalDeps } from './deps';

export interface RecordSiteJobLogInput {
  workflowId: string;
  runId: string;
  logType: LogType;
  siteId: string;
  status: 'SUCCESS' | 'FAILED';
  startedAt: string;
  rowsExported: number;
  rowsDeleted: number;
  error: string | null;
}

/** The `scheduler_job_log` row of one site's archive; keyed by run and site, so a retry writes it once. */
export function recordSiteJobLog({ db }: ArchivalDeps) {
  return async (input: RecordSiteJobLogInput): Promise<void> => {
    await writeJobLog(db, {
      siteId: input.siteId,
      jobName: input.workflowId,
      jobKey: `${input.runId}:${input.siteId}`,
      status: input.status,
      startedAt: new Date(input.startedAt),
      finishedAt: new Date(),
      rowsAffected: input.rowsDeleted,
      message:
        input.status === 'SUCCESS'
          ? `archived ${input.logType}: ${input.rowsExported} rows exported, ${input.rowsDeleted} deleted`
          : `archive of ${input.logType} failed: ${input.error}`,
    });
  };
}
