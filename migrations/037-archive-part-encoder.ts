import { Knex } from 'knex';

/**
 * The settings a part's file was encoded with (Parquet: its rows per row group), recorded with the part: a
 * staged file written again must give the very bytes recorded, so it is encoded as it was, even after the
 * encoder's defaults change. Null for a CSV part, and for a Parquet part recorded before this migration
 * (written again by the rule of its time).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('alter table settings.archive_part add column encoder jsonb');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('alter table settings.archive_part drop column encoder');
}
