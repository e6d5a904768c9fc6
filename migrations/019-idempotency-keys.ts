import { Knex } from 'knex';

/**
 * `Idempotency-Key` on the send endpoints: the first answer to a key is kept for 24 hours, with a digest of
 * the request it answered, for the same caller on the same route. A key in flight has no answer yet.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table settings.idempotency_key (
      scope text not null,
      key text not null,
      request_digest text not null,
      answer_status integer,
      answer_body jsonb,
      created_at timestamptz not null default now(),
      primary key (scope, key)
    );
    create index idempotency_key_created_at on settings.idempotency_key (created_at);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists settings.idempotency_key');
}
