import { Knex } from 'knex';

/**
 * The unsubscribe-link keys of SECRETS_KEYs rotated away, so that links made under them keep working
 * (RFC 8058 links stay in mailboxes for years). Each is sealed under the current key, bound to its row, and
 * re-sealed by every rotation; its fingerprint is a hash, so one is kept once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table email.retired_link_key (
      id uuid primary key,
      fingerprint text not null unique,
      sealed text not null,
      retired_at timestamptz not null default now()
    )
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists email.retired_link_key');
}
