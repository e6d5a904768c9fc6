import { Knex } from 'knex';
import { rawRows } from './db';
import { EMAIL_LOG_TABLE } from './messaging/email-logs';
import { DEPLOYMENT_TABLE } from './deploy/registry';
import { JOB_LOG_TABLE } from './scheduler-job-log';
import { APPROVAL_TABLE } from './approvals/approvals';
import { PART_TABLE } from './archival/parts';

// What the platform counts of its own work, read when Prometheus scrapes the API (decision 044). Each figure
// is grouped by values from a short list, so that no label of a metric holds a user, an address or a run.

export interface Counted {
  labels: Record<string, string>;
  count: number;
}

const counted = (rows: Array<Record<string, string | number>>, labels: string[]): Counted[] =>
  rows.map((row) => ({ labels: Object.fromEntries(labels.map((label) => [label, String(row[label])])), count: Number(row.count) }));

/** Emails created in the last hour, by status and by the channel configuration that took them ('none' before one did). */
export async function emailsOfLastHour(db: Knex): Promise<Counted[]> {
  const rows = await rawRows<Record<string, string | number>>(
    db,
    `select coalesce(channel, 'none') as channel, status, count(*) as count
       from ${EMAIL_LOG_TABLE} where created_at > now() - interval '1 hour' group by 1, 2`,
  );
  return counted(rows, ['channel', 'status']);
}

/** Deployments that started or finished in the last hour, by status. */
export async function deploymentsOfLastHour(db: Knex): Promise<Counted[]> {
  const rows = await rawRows<Record<string, string | number>>(
    db,
    `select status, count(*) as count from ${DEPLOYMENT_TABLE}
      where coalesce(finished_at, started_at) > now() - interval '1 hour' group by 1`,
  );
  return counted(rows, ['status']);
}

/**
 * Job runs of the last day, by job name and outcome. An archive run's name is its log type's
 * (`archive:EMAIL_LOG`), whatever else its workflow id holds, so that a run started by hand adds no label value
 * of its own. The label is `job_name`: Prometheus gives every series a `job` of its own, the scrape's.
 */
export async function jobRunsOfLastDay(db: Knex): Promise<Counted[]> {
  const rows = await rawRows<Record<string, string | number>>(
    db,
    `select case when job_name like 'archive:%' then 'archive:' || split_part(job_name, ':', 2) else job_name end as job_name,
            status as outcome, count(*) as count
       from ${JOB_LOG_TABLE} where created_at > now() - interval '1 day' group by 1, 2`,
  );
  return counted(rows, ['job_name', 'outcome']);
}

/** Approval requests still waiting, by how long: under an hour, under a day, longer. */
export async function approvalsWaitingByAge(db: Knex): Promise<Counted[]> {
  const rows = await rawRows<Record<string, string | number>>(
    db,
    `select case when created_at > now() - interval '1 hour' then 'under_1h'
                 when created_at > now() - interval '1 day' then 'under_1d' else 'over_1d' end as age,
            count(*) as count
       from ${APPROVAL_TABLE} where status = 'PENDING' group by 1`,
  );
  return counted(rows, ['age']);
}

/** What archive runs wrote in the last day, by log type: the rows and the bytes of the files they made. */
export async function archivedOfLastDay(db: Knex): Promise<{ rows: Counted[]; bytes: Counted[] }> {
  const found = await rawRows<{ log_type: string; rows: string | number; bytes: string | number }>(
    db,
    `select log_type, sum(row_count) as rows, sum(size_bytes) as bytes
       from ${PART_TABLE} where created_at > now() - interval '1 day' group by 1`,
  );
  return {
    rows: found.map((row) => ({ labels: { log_type: row.log_type }, count: Number(row.rows) })),
    bytes: found.map((row) => ({ labels: { log_type: row.log_type }, count: Number(row.bytes) })),
  };
}
