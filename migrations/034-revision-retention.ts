import { Knex } from 'knex';

/**
 * Revision retention per component type and site (a site's own, else the global one, site_id null): each
 * item keeps its last `keep_last` revisions, and every revision that was published or that an open approval
 * or a scheduled publish names, whatever its age. Without a rule every revision is kept, as before.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table settings.revision_retention (
      id uuid primary key default gen_random_uuid(),
      component_type text not null,
      site_id text,
      keep_last integer not null check (keep_last between 1 and 10000),
      updated_by text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint revision_retention_type_site_key unique nulls not distinct (component_type, site_id)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table settings.revision_retention');
}
