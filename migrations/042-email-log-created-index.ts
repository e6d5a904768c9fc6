import { Knex } from 'knex';

/**
 * The emails of the last hour, which the API's /metrics counts when Prometheus scrapes it (decision 044). The
 * log's index leads with the site, so without this one each scrape read the whole month's partition. On the
 * partitioned table, PostgreSQL makes it on every partition, and on each new one. While it builds, writes to
 * the email log wait: on a large log, run the upgrade at a quiet hour.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('create index if not exists email_log_created_idx on email.email_log (created_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop index if exists email.email_log_created_idx');
}
