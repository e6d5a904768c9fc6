import { Knex } from 'knex';

export interface JobLogEntry {
  siteId: string;
  jobName: string;
  /** Makes the write idempotent: a retried activity finds its earlier row. */
  jobKey: string;
  status: 'RUNNING' | 'SUCCESS' | 'FAILED' | 'SKIPPED';
  startedAt: Date;
  finishedAt: Date | null;
  rowsAffected: number;
  message: string | null;
}

/** Writes one `settings.scheduler_job_log` row per job run and site; the same key twice writes once. */
export async function writeJobLog(db: Knex, entry: JobLogEntry): Promise<void> {
  await db('settings.scheduler_job_log')
    .insert({
      site_id: entry.siteId,
      job_name: entry.jobName,
      job_key: entry.jobKey,
      status: entry.status,
      started_at: entry.startedAt,
      finished_at: entry.finishedAt,
      rows_affected: entry.rowsAffected,
      message: entry.message,
    })
    .onConflict('job_key')
    .ignore();
}
