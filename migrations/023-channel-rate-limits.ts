import { Knex } from 'knex';

/**
 * Per-channel rate limits (third wave): a configuration may take no more than `rate_per_second` messages a
 * second, `burst` of them at once, across every worker. Each send reserves its moment from the
 * configuration's pace row (the generic cell rate algorithm: `theoretical_arrival` is when the next message
 * would go if the configuration were sent to at exactly its rate), in one atomic update, so replicas share it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table settings.email_configuration add column rate_per_second numeric check (rate_per_second >= 0.1 and rate_per_second <= 10000);
    alter table settings.email_configuration add column burst integer check (burst between 1 and 10000);
    alter table settings.sms_configuration add column rate_per_second numeric check (rate_per_second >= 0.1 and rate_per_second <= 10000);
    alter table settings.sms_configuration add column burst integer check (burst between 1 and 10000);
    create table settings.channel_pace (
      config_id uuid primary key,
      theoretical_arrival timestamptz not null
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop table if exists settings.channel_pace;
    alter table settings.email_configuration drop column if exists rate_per_second, drop column if exists burst;
    alter table settings.sms_configuration drop column if exists rate_per_second, drop column if exists burst;
  `);
}
