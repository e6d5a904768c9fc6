import { Knex } from 'knex';

/**
 * Every job run writes its job-log rows, a dry run included: DRY_RUN is an outcome of its own, so counting
 * what would be archived is never mistaken for archiving it. Filtering by job name is indexed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table settings.scheduler_job_log drop constraint if exists scheduler_job_log_status_check;
    alter table settings.scheduler_job_log add constraint scheduler_job_log_status_check
      check (status in ('RUNNING', 'SUCCESS', 'FAILED', 'SKIPPED', 'DRY_RUN'));
    create index if not exists scheduler_job_log_job_created_idx on settings.scheduler_job_log (job_name, created_at desc, id desc);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index if exists settings.scheduler_job_log_job_created_idx;
    delete from settings.scheduler_job_log where status = 'DRY_RUN';
    alter table settings.scheduler_job_log drop constraint if exists scheduler_job_log_status_check;
    alter table settings.scheduler_job_log add constraint scheduler_job_log_status_check
      check (status in ('RUNNING', 'SUCCESS', 'FAILED', 'SKIPPED'));
  `);
}
