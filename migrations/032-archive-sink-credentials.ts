import { Knex } from 'knex';

/**
 * The credentials of the S3-compatible archive store (ARCHIVE_SINK=s3). The store itself (endpoint, bucket,
 * prefix) is the deployment's configuration; its keys are set by an ADMIN and kept here, the secret key
 * encrypted under SECRETS_KEY and bound to this row, never answered. One row: the platform has one store.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table settings.archive_sink_credentials (
      id text primary key check (id = 's3'),
      access_key_id text not null check (length(access_key_id) between 1 and 256),
      secret_access_key text not null,
      updated_by text not null,
      updated_by_name text,
      updated_at timestamptz not null default now()
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`drop table settings.archive_sink_credentials;`);
}
