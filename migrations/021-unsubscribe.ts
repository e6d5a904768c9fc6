import { Knex } from 'knex';

/**
 * One-click unsubscribe (RFC 8058, third wave): email templates have a `category`, `transactional` (the
 * default) or `bulk`; each log row keeps the category its message was sent as (a role send is bulk); and
 * each site keeps the addresses unsubscribed from a category.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table email.email_template add column category text not null default 'transactional' check (category in ('transactional', 'bulk'));
    alter table email.email_template_aud add column category text not null default 'transactional' check (category in ('transactional', 'bulk'));
    alter table email.email_log add column category text not null default 'transactional' check (category in ('transactional', 'bulk'));
    update email.email_log set category = 'bulk' where batch_id is not null and platform_template is null;
    create table email.unsubscription (
      site_id text not null,
      address text not null check (address = lower(address)),
      category text not null check (category in ('bulk')),
      created_at timestamptz not null default now(),
      primary key (site_id, address, category)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop table if exists email.unsubscription;
    alter table email.email_log drop column if exists category;
    alter table email.email_template_aud drop column if exists category;
    alter table email.email_template drop column if exists category;
  `);
}
