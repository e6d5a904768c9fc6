import { Knex } from 'knex';

/**
 * SMTP without TLS only when a configuration says so: by default a send upgrades with STARTTLS whenever the
 * server offers it, so a password is never sent in clear to a server that could have taken it encrypted.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table settings.email_configuration add column smtp_allow_plain boolean not null default false');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table settings.email_configuration drop column if exists smtp_allow_plain');
}
