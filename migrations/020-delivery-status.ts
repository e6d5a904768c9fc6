import { Knex } from 'knex';

/**
 * Delivery statuses (third wave), GOV.UK Notify's: every email log row says where its message is, beside
 * the first wave's PENDING / SUCCESS / FAILED, and which configuration an attempt in flight hands it to.
 * And each site's suppression list: addresses a hard bounce or a complaint took out of its sends. An entry
 * is lifted, not deleted: who lifted it and when stay.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- The id of the configuration an attempt is handing the message to: set before each try, cleared once its outcome
    -- is recorded. Still set when an attempt starts, the last one ended unrecorded (a killed worker).
    alter table email.email_log add column sending_through text;
    alter table email.email_log add column delivery_status text not null default 'created'
      check (delivery_status in ('created', 'sending', 'delivered', 'temporary-failure', 'permanent-failure', 'technical-failure', 'suppressed'));
    -- Rows from before: what their status and reason say.
    update email.email_log set delivery_status = case
      when status = 'SUCCESS' then 'delivered'
      when status = 'FAILED' and error like 'SMTP 5%' then 'permanent-failure'
      when status = 'FAILED' then 'temporary-failure'
      when attempts > 0 then 'sending'
      else 'created' end
    where status <> 'PENDING' or attempts > 0;

    create table email.suppression (
      id uuid primary key default gen_random_uuid(),
      site_id text not null,
      address text not null check (address = lower(address)),
      reason text not null check (reason in ('hard-bounce', 'complaint')),
      detail text,
      log_id bigint,
      created_at timestamptz not null default now(),
      lifted_at timestamptz,
      lifted_by text
    );
    create unique index suppression_in_force on email.suppression (site_id, address) where lifted_at is null;
    create index suppression_site on email.suppression (site_id, created_at desc, id desc);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop table if exists email.suppression;
    alter table email.email_log drop column if exists delivery_status;
    alter table email.email_log drop column if exists sending_through;
  `);
}
