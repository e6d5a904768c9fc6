import { Knex } from 'knex';

/**
 * Who hears of a service's deploy that failed, reverted or was rolled back: the holders of a role in a site,
 * addresses named outright, or both; the platform's email channels carry the notice, logged under the site. Null: nobody.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`alter table infra.service add column notify jsonb`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`alter table infra.service drop column notify`);
}
