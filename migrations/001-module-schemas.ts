import { Knex } from 'knex';

/** One PostgreSQL schema per platform module. */
export const MODULE_SCHEMAS = ['settings', 'assets', 'infra', 'email', 'workflow', 'content', 'forms', 'integration', 'directory'] as const;

export async function up(knex: Knex): Promise<void> {
  for (const schema of MODULE_SCHEMAS) await knex.raw('create schema if not exists ??', [schema]);
}

export async function down(knex: Knex): Promise<void> {
  for (const schema of [...MODULE_SCHEMAS].reverse()) await knex.raw('drop schema if exists ?? cascade', [schema]);
}
