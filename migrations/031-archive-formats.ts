import { Knex } from 'knex';

/**
 * Archive files in Parquet as well as CSV. A policy may name its format (null: the platform's
 * ARCHIVE_FORMAT); each part records the format it was written in, so that its file is read back as what
 * it is, whatever the policy says later.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table settings.archive_policy add column format text check (format in ('csv', 'parquet'));
    alter table settings.archive_part add column format text not null default 'csv' check (format in ('csv', 'parquet'));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table settings.archive_part drop column format;
    alter table settings.archive_policy drop column format;
  `);
}
