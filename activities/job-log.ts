import { Db } from '../data/db';
import { writeJobLog } from '../data/scheduler-job-log';
import { JobOutcome, NO_SITE } from '../domain/job-log';

export interface JobRunRecord {
  jobName: string;
  /** Makes the row idempotent: the run id, with the site or the item when one run writes several rows. */
  jobKey: string;
  /** The site the run worked on; none for a platform job such as the deploy reconcile. */
  siteId?: string;
  outcome: Exclude<JobOutcome, 'RUNNING'>;
  startedAt: string;
  rowsAffected: number;
  message: string;
}

/** Writes one job run's `settings.scheduler_job_log` row; a retry finds it written. Any worker may have it. */
export function recordJobRun({ db }: { db: Db }) {
  return async (record: JobRunRecord): Promise<void> => {
    await writeJobLog(db, {
      siteId: record.siteId ?? NO_SITE,
      jobName: record.jobName,
      jobKey: record.jobKey,
      status: record.outcome,
      startedAt: new Date(record.startedAt),
      finishedAt: new Date(),
      rowsAffected: record.rowsAffected,
      message: record.message,
    });
  };
}
