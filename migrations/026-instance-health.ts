import { Knex } from 'knex';

/**
 * When a running instance's health check began to fail, as the reconcile's survey last saw it (null: it
 * passes). A change either way is recorded once, as an UNHEALTHY or HEALTHY event, in the same transaction.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table infra.service_instance add column failing_since timestamptz`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table infra.service_instance drop column failing_since`);
}
