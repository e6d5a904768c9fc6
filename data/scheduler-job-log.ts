import { Knex } from 'knex';
import { Page, PageRequest, paginate } from './paging';
import { JobOutcome } from '../domain/job-log';

export const JOB_LOG_TABLE = 'settings.scheduler_job_log';

export interface JobLogEntry {
  siteId: string;
  jobName: string;
  /** Makes the write idempotent: a retried activity finds its earlier row. */
  jobKey: string;
  status: JobOutcome;
  startedAt: Date;
  finishedAt: Date | null;
  rowsAffected: number;
  message: string | null;
}

/**
 * Writes one `settings.scheduler_job_log` row per job run and site; the same key twice writes once. The log
 * is partitioned by month on `created_at`, where no unique key can hold the job key alone: writers of one key
 * take turns on a transaction lock of it, and the second finds the first's row.
 */
export async function writeJobLog(db: Knex, entry: JobLogEntry): Promise<void> {
  const write = async (trx: Knex.Transaction) => {
    await trx.raw('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`${JOB_LOG_TABLE}:${entry.jobKey}`]);
    if (await trx(JOB_LOG_TABLE).where({ job_key: entry.jobKey }).first('id')) return;
    await trx(JOB_LOG_TABLE).insert({
      site_id: entry.siteId,
      job_name: entry.jobName,
      job_key: entry.jobKey,
      status: entry.status,
      started_at: entry.startedAt,
      finished_at: entry.finishedAt,
      rows_affected: entry.rowsAffected,
      message: entry.message,
    });
  };
  if (db.isTransaction) await write(db as Knex.Transaction);
  else await db.transaction(write);
}

export interface JobLogRow {
  id: number;
  site_id: string;
  created_at: Date;
  job_name: string;
  job_key: string | null;
  status: JobLogEntry['status'];
  started_at: Date;
  finished_at: Date | null;
  rows_affected: number;
  message: string | null;
}

/** Job runs, newest first, narrowed by site, job and outcome when asked. */
export async function listJobLogs(db: Knex, args: { siteId?: string; job?: string; outcome?: JobOutcome; page: PageRequest }): Promise<Page<JobLogRow>> {
  const query = db(JOB_LOG_TABLE).select('*');
  if (args.siteId) query.where({ site_id: args.siteId });
  if (args.job) query.where({ job_name: args.job });
  if (args.outcome) query.where({ status: args.outcome });
  return paginate<JobLogRow>({ query, ...args.page, timeColumn: 'created_at', idColumn: 'id' });
}
