import { Knex } from 'knex';

/**
 * Deleting an archive file (ADMIN only) leaves this row behind: once a file's rows were pruned from their
 * log table, the file was their only copy, so who removed it, when, from which run and how many rows it
 * held is kept for good.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table assets.archive_deletion (
      id uuid primary key default gen_random_uuid(),
      asset_id uuid not null,
      site_id text not null,
      file_name text not null,
      sha256 text not null,
      log_type text,
      workflow_id text,
      run_id text,
      row_count bigint,
      deleted_by text not null,
      deleted_by_name text,
      deleted_at timestamptz not null default now()
    );
    create index archive_deletion_site_idx on assets.archive_deletion (site_id, deleted_at desc);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists assets.archive_deletion');
}
