import { Knex } from 'knex';

/**
 * Certificates for the hostnames the edge serves over TLS: a service's, and the platform's own. One row per
 * hostname holds what the edge serves (the chain and its sealed key) and the state of getting the next one
 * (an order in flight with its own sealed key, or the ACME server's problem). The ACME account key and the
 * HTTP-01 answers live beside them. The state moves here from `infra.service_domain` (040). Its old state
 * columns stay for now: the release before this one reads them while an upgrade is under way. A later
 * migration drops them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table infra.certificate (
      hostname text primary key
        -- {0,1} for "optional": knex reads a question mark as the place of a binding.
        check (length(hostname) <= 253 and hostname ~ '^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9]){0,1}\\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9]){0,1}$'),
      source text not null default 'ACME' check (source in ('ACME', 'UPLOADED')),
      state text not null default 'PENDING' check (state in ('PENDING', 'ISSUED', 'FAILED')),
      chain_pem text,
      key_sealed text,
      serial text,
      not_before timestamptz,
      not_after timestamptz,
      renew_at timestamptz,
      order_url text,
      order_key_sealed text,
      issued_order_url text,
      problem text,
      attempted_at timestamptz,
      updated_at timestamptz not null default now(),
      -- A chain is served with its key, never without.
      check ((chain_pem is null) = (key_sealed is null)),
      check (state <> 'ISSUED' or chain_pem is not null)
    );
    create index certificate_renew_at_idx on infra.certificate (renew_at) where source = 'ACME';
    create trigger certificate_changed after insert or update or delete on infra.certificate
      for each statement execute function infra.notify_registry_changed();

    create table infra.acme_challenge (
      -- PostgreSQL's regular expressions count to 255 at most.
      token text primary key check (token ~ '^[A-Za-z0-9_-]{16,255}$'),
      hostname text not null,
      key_authorization text not null,
      created_at timestamptz not null default now()
    );

    create table infra.acme_account (
      directory_url text primary key,
      key_sealed text not null,
      account_url text,
      created_at timestamptz not null default now()
    );

    create index acme_challenge_hostname_idx on infra.acme_challenge (hostname);

    -- A name a service lets go (a PUT without it, an undeploy's cascade, or any writer) takes its certificate,
    -- key and challenges with it: the edge stops serving it, and a next owner starts afresh.
    create function infra.forget_certificate() returns trigger language plpgsql as $$
    begin
      delete from infra.certificate where hostname = old.hostname;
      delete from infra.acme_challenge where hostname = old.hostname;
      return old;
    end $$;
    create trigger service_domain_forgotten after delete on infra.service_domain
      for each row execute function infra.forget_certificate();

    insert into infra.certificate (hostname) select hostname from infra.service_domain on conflict do nothing;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger if exists service_domain_forgotten on infra.service_domain;
    drop function if exists infra.forget_certificate();
    drop table if exists infra.acme_account;
    drop table if exists infra.acme_challenge;
    drop table if exists infra.certificate;
  `);
}
