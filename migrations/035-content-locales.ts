import { Knex } from 'knex';

/**
 * An editor's comment on a revision (the console asks for one on every edit), and each site's content
 * settings: whether published reads in one language fall back to the other where a text is empty (on
 * unless the site says otherwise: a site without a row falls back).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table public.revinfo add column comment text check (char_length(comment) <= 2000);
    create table settings.content_site (
      site_id text primary key,
      locale_fallback boolean not null default true,
      updated_by text,
      updated_at timestamptz not null default now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table settings.content_site; alter table public.revinfo drop column comment;');
}
