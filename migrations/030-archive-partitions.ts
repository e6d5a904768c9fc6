import { Knex } from 'knex';

/**
 * The manifest of partition-drop archival: one row per log-table month that a run archives whole. It is
 * written before the month's parts are exported and moves EXPORTING → EXPORTED → DETACHED → DROPPED; a run
 * that stops anywhere leaves it where it stood, and the next run finishes it before anything else. At most
 * one open archive per partition. The month's parts are the usual parts, marked with it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table settings.archive_partition (
      id uuid primary key default gen_random_uuid(),
      workflow_id text not null,
      run_id text not null,
      log_type text not null,
      partition_name text not null,
      range_from timestamptz not null,
      range_to timestamptz not null,
      site_ids text[] not null,
      state text not null default 'EXPORTING' check (state in ('EXPORTING', 'EXPORTED', 'DETACHED', 'DROPPED')),
      rows_dropped bigint,
      rows_returned bigint,
      rows_by_site jsonb,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index archive_partition_open_idx on settings.archive_partition (partition_name) where state <> 'DROPPED';
    alter table settings.archive_part add column partition_archive_id uuid references settings.archive_partition (id);
    create index archive_part_partition_idx on settings.archive_part (partition_archive_id) where partition_archive_id is not null;
    -- A run numbers a site's row-path parts from 1, and each month it drops numbers its own from 1.
    alter table settings.archive_part drop constraint archive_part_run_id_site_id_part_no_key;
    create unique index archive_part_run_site_part_key on settings.archive_part (run_id, site_id, part_no) where partition_archive_id is null;
    create unique index archive_part_month_site_part_key on settings.archive_part (partition_archive_id, site_id, part_no) where partition_archive_id is not null;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index if exists settings.archive_part_run_site_part_key;
    drop index if exists settings.archive_part_month_site_part_key;
    alter table settings.archive_part drop column if exists partition_archive_id;
    alter table settings.archive_part add constraint archive_part_run_id_site_id_part_no_key unique (run_id, site_id, part_no);
    drop table if exists settings.archive_partition;
  `);
}
