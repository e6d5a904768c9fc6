import { Knex } from 'knex';

/**
 * Channels in order (third wave): several configurations of a channel may be active at once, tried by
 * `priority` (lowest first) when a message meets a transient failure. The log row names the configuration
 * that took its message.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index if exists settings.email_configuration_one_active;
    drop index if exists settings.sms_configuration_one_active;
    alter table settings.email_configuration add column priority integer not null default 0;
    alter table settings.sms_configuration add column priority integer not null default 0;
    alter table email.email_log add column channel text;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table email.email_log drop column if exists channel;
    alter table settings.email_configuration drop column if exists priority;
    alter table settings.sms_configuration drop column if exists priority;
  `);
}
