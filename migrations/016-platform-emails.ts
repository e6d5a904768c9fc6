import { Knex } from 'knex';

/**
 * Emails the platform sends of its own (approval notices): their texts are the platform's templates, named
 * on the log row, not a site's EMAIL_TEMPLATE revision. They are sent and logged like any other email.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table email.email_log add column platform_template text');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table email.email_log drop column if exists platform_template');
}
