import { Knex } from 'knex';

/**
 * Volume and cost limits:
 * - a bulk send's variables are stored once, with its batch, not copied into every recipient's row;
 * - the per-user send limit counts a user's recent sends by (requested_by, created_at);
 * - the public runtime finds a published entity by its published slug through an index.
 */
const PUBLISHED_CONTENT_TABLES = ['content.page', 'content.page_layout', 'content.portlet', 'content.web_content', 'content.navigation', 'forms.dynamic_form'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table email.email_batch (
      batch_id uuid primary key,
      site_id text not null,
      variables jsonb not null,
      requested_by text,
      created_at timestamptz not null default now()
    );
    create index email_log_requested_by_idx on email.email_log (requested_by, created_at);
  `);
  for (const table of PUBLISHED_CONTENT_TABLES) {
    await knex.raw(`create index ${table.split('.')[1]}_published_slug_idx on ${table} (site_id, (published_snapshot->>'slug'))`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of PUBLISHED_CONTENT_TABLES) await knex.raw(`drop index if exists ${table.split('.')[0]}.${table.split('.')[1]}_published_slug_idx`);
  await knex.raw('drop index if exists email.email_log_requested_by_idx; drop table if exists email.email_batch');
}
