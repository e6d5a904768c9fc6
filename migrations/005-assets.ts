import { Knex } from 'knex';

/**
 * Assets, with the lifecycle fields of versioned types from the start (their history came with 007).
 * Bytes live in content-addressed storage; `storage_key` is their sha256.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table assets.asset (
      id uuid primary key default gen_random_uuid(),
      site_id text not null,
      name text not null,
      folder text not null default '/',
      content_type text not null,
      size_bytes bigint not null,
      sha256 text not null,
      storage_key text not null,
      status text not null default 'DRAFT' check (status in ('DRAFT', 'PENDING_APPROVAL', 'PUBLISHED', 'REJECTED', 'ARCHIVED')),
      published_rev integer,
      published_at timestamptz,
      created_by text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index asset_site_folder_name_sha_key on assets.asset (site_id, folder, name, sha256);
    create index asset_site_folder_idx on assets.asset (site_id, folder, created_at desc, id desc);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists assets.asset');
}
