import { Knex } from 'knex';

/**
 * Releases: a named set of items of any types, each at a chosen revision, published in one transaction or
 * not at all. `version` moves on with every change to the items, so an approval or a schedule names the
 * exact set it was asked about. `failure` says which items stopped the last attempt, and why.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table content.release (
      id uuid primary key default gen_random_uuid(),
      site_id text not null,
      name text not null check (char_length(name) between 1 and 200),
      status text not null default 'OPEN' check (status in ('OPEN', 'PENDING_APPROVAL', 'PUBLISHED', 'FAILED', 'REJECTED')),
      version integer not null default 1,
      -- The approval the release waits on: only its callback moves the release on.
      pending_correlation_id uuid,
      failure jsonb,
      created_by text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      published_at timestamptz,
      published_by text
    );
    create index release_site_created on content.release (site_id, created_at desc, id);
    create table content.release_item (
      id uuid primary key default gen_random_uuid(),
      release_id uuid not null references content.release (id) on delete cascade,
      component_type text not null,
      component_id uuid not null,
      revision integer not null check (revision > 0),
      added_by text,
      added_at timestamptz not null default now(),
      constraint release_item_once unique (release_id, component_type, component_id)
    );
    -- Revision retention keeps every revision a release names.
    create index release_item_component on content.release_item (component_type, component_id, revision);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table content.release_item; drop table content.release;');
}
