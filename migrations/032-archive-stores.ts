import { Knex } from 'knex';

/**
 * S3-compatible archive stores. A policy's `sink` is `file` or `s3` (null: the platform's ARCHIVE_SINK), and
 * an `s3` policy may name its own store and key prefix (none: the platform's, ARCHIVE_S3_*). A store is its
 * endpoint and bucket, with the keys to reach it: the secret key encrypted under SECRETS_KEY and bound to its
 * row, never answered. An archive file in a store is recorded as `s3://{store id}/{key}`, so it stays readable
 * whatever its policy says later; a store that holds files is therefore never deleted with a policy.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table settings.archive_store (
      id uuid primary key default gen_random_uuid(),
      endpoint text not null,
      bucket text not null,
      region text not null,
      path_style boolean not null,
      access_key_id text check (length(access_key_id) between 1 and 256),
      secret_access_key text,
      updated_by text,
      updated_by_name text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      unique (endpoint, bucket),
      check ((access_key_id is null) = (secret_access_key is null))
    );
    alter table settings.archive_policy
      add column sink text check (sink in ('file', 's3')),
      add column s3_store_id uuid references settings.archive_store (id),
      add column s3_prefix text,
      add constraint archive_policy_s3_store check ((s3_store_id is null and s3_prefix is null) or sink = 's3');
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table settings.archive_policy drop constraint archive_policy_s3_store, drop column s3_prefix, drop column s3_store_id, drop column sink;
    drop table settings.archive_store;
  `);
}
