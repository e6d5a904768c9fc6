import { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table directory."user" (
      id uuid primary key default gen_random_uuid(),
      email text not null unique,
      phone text,
      name text not null,
      locale text not null default 'en' check (locale in ('en', 'ar')),
      roles text[] not null default '{}',
      site_ids text[] not null default '{}',
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index user_site_ids_idx on directory."user" using gin (site_ids);
    create index user_roles_idx on directory."user" using gin (roles);
    create index user_created_idx on directory."user" (created_at desc, id desc);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists directory."user"');
}
