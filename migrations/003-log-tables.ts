import { Knex } from 'knex';

/**
 * The three log tables archival works on. Each: `id bigint` identity, `site_id`, `created_at`, indexed on
 * `(site_id, created_at, id)`. No boolean columns, so the archived CSV (PostgreSQL's COPY) has none of
 * COPY's `t`/`f` spellings.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table settings.scheduler_job_log (
      id bigint generated always as identity primary key,
      site_id text not null,
      created_at timestamptz not null default now(),
      job_name text not null,
      job_key text unique,
      status text not null check (status in ('RUNNING', 'SUCCESS', 'FAILED', 'SKIPPED')),
      started_at timestamptz not null,
      finished_at timestamptz,
      rows_affected bigint not null default 0,
      message text
    );
    create index scheduler_job_log_site_created_idx on settings.scheduler_job_log (site_id, created_at, id);

    create table email.email_log (
      id bigint generated always as identity primary key,
      site_id text not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      template_id uuid,
      template_revision integer,
      batch_id uuid,
      recipient text not null,
      locale text,
      subject text,
      status text not null check (status in ('PENDING', 'SUCCESS', 'FAILED')),
      error text,
      attempts integer not null default 0,
      missing_variables jsonb not null default '[]'::jsonb,
      variables jsonb,
      requested_by text
    );
    create index email_log_site_created_idx on email.email_log (site_id, created_at, id);
    create index email_log_template_idx on email.email_log (template_id, created_at desc, id desc);

    create table integration.integration_log (
      id bigint generated always as identity primary key,
      site_id text not null,
      created_at timestamptz not null default now(),
      component text not null,
      operation text,
      url text not null,
      method text not null,
      status_code integer,
      duration_ms integer,
      outcome text not null check (outcome in ('SUCCESS', 'FAILED')),
      request_body text,
      response_body text,
      error text
    );
    create index integration_log_site_created_idx on integration.integration_log (site_id, created_at, id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop table if exists integration.integration_log;
    drop table if exists email.email_log;
    drop table if exists settings.scheduler_job_log;
  `);
}
