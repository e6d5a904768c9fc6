import { Knex } from 'knex';

/**
 * Retention policies, and the manifest of archive parts: every part is recorded, with the exact ids it
 * holds (`archive_part_row`, an array per part since 009), before it is uploaded, so a later run can finish
 * what an earlier one left.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table settings.archive_policy (
      id uuid primary key default gen_random_uuid(),
      log_type text not null check (log_type in ('SCHEDULER_JOB_LOG', 'EMAIL_LOG', 'INTEGRATION_LOG')),
      site_id text,
      retention_days integer not null check (retention_days between 1 and 3650),
      enabled boolean not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint archive_policy_log_type_site_key unique nulls not distinct (log_type, site_id)
    );

    create table settings.archive_part (
      id uuid primary key default gen_random_uuid(),
      workflow_id text not null,
      run_id text not null,
      log_type text not null,
      site_id text not null,
      cutoff timestamptz not null,
      part_no integer not null,
      file_name text not null,
      row_count bigint not null,
      min_id bigint not null,
      max_id bigint not null,
      size_bytes bigint not null,
      sha256 text not null,
      state text not null check (state in ('EXPORTED', 'CONFIRMED', 'DELETED')),
      asset_id uuid,
      rows_deleted bigint not null default 0,
      error text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (run_id, site_id, part_no)
    );
    create index archive_part_pending_idx on settings.archive_part (log_type, site_id) where state <> 'DELETED';

    create table settings.archive_part_row (
      part_id uuid not null references settings.archive_part (id) on delete cascade,
      row_id bigint not null,
      primary key (part_id, row_id)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop table if exists settings.archive_part_row;
    drop table if exists settings.archive_part;
    drop table if exists settings.archive_policy;
  `);
}
