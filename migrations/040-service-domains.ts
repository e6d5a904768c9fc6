import { Knex } from 'knex';

/**
 * The hostnames each deployed service answers on, and the state of each one's certificate. The hostname is
 * the key, so two services can never hold the same one, whoever writes the row; its shape is checked here
 * too (a DNS name in ASCII, lower case, no trailing dot), as the API checks it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table infra.service_domain (
      hostname text primary key
        -- {0,1} for "optional": knex reads a question mark as the place of a binding.
        check (length(hostname) <= 253 and hostname ~ '^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9]){0,1}\\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9]){0,1}$'),
      service_id uuid not null references infra.service (id) on delete cascade,
      certificate_state text not null default 'PENDING' check (certificate_state in ('PENDING', 'ISSUED', 'FAILED')),
      not_after timestamptz,
      problem text,
      created_at timestamptz not null default now()
    );
    create index service_domain_service_idx on infra.service_domain (service_id);
    -- The edge's control plane rewrites its routes on every change, as for the service tables (017).
    create trigger service_domain_changed after insert or update or delete on infra.service_domain
      for each statement execute function infra.notify_registry_changed();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists infra.service_domain');
}
