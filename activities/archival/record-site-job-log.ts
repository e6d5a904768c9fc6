import { writeJobLog } from '../../data/scheduler-job-log';
import { LogType } from '../../domain/archival';
import { JobOutcome } from '../../domain/job-log';
import { ArchivalDeps } from './deps';

export interface RecordSiteJobLogInput {
  workflowId: string;
  runId: string;
  logType: LogType;
  siteId: string;
  status: Exclude<JobOutcome, 'RUNNING'>;
  startedAt: string;
  rowsExported: number;
  rowsDeleted: number;
  /** Why the site failed or was skipped. */
  error: string | null;
}

function messageOf(input: RecordSiteJobLogInput): string {
  switch (input.status) {
    case 'SUCCESS':
      return `archived ${input.logType}: ${input.rowsExported} rows exported, ${input.rowsDeleted} deleted`;
    case 'DRY_RUN':
      return `dry run of ${input.logType}: ${input.rowsExported} rows would be archived`;
    case 'SKIPPED':
      return `skipped ${input.logType}: ${input.error}`;
    case 'FAILED':
      return `archive of ${input.logType} failed: ${input.error}`;
  }
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
      // A dry run changes nothing: what it counted is in the message.
      rowsAffected: input.status === 'DRY_RUN' ? 0 : input.rowsDeleted,
      message: messageOf(input),
    });
  };
}
