import { Knex } from 'knex';

/**
 * The service registry: services, their running instances, and every deploy with its
 * stages. A deploy's sequence number names its image (`{scope}/{name}:{seq}`), so history and rollback
 * point at images that are kept.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table infra.service (
      id uuid primary key default gen_random_uuid(),
      name text not null unique check (name ~ '^[a-z][a-z0-9-]{1,62}$'),
      slug text not null unique,
      kind text not null check (kind in ('CORE', 'JAR', 'IMAGE')),
      dynamic boolean not null,
      "group" text not null default 'platform',
      image text,
      port integer,
      host_port integer,
      env jsonb not null default '{}',
      description text,
      desired_instances integer not null default 1 check (desired_instances >= 1),
      status text not null check (status in ('DEPLOYING', 'RUNNING', 'DEGRADED', 'FAILED', 'UNDEPLOYING')),
      health_path text,
      current_deployment_id uuid,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );

    create table infra.service_instance (
      id uuid primary key,
      service_id uuid not null references infra.service (id) on delete cascade,
      deployment_id uuid not null,
      container_id text not null,
      address text not null,
      state text not null check (state in ('HEALTHY', 'DRAINING', 'DEAD')),
      last_health_at timestamptz,
      created_at timestamptz not null default now()
    );
    create index service_instance_routing_idx on infra.service_instance (service_id, state, created_at, id);

    create table infra.deployment (
      id uuid primary key default gen_random_uuid(),
      service_name text not null,
      seq integer not null,
      kind text not null check (kind in ('JAR', 'IMAGE')),
      image text not null,
      build_from_jar boolean not null,
      settings jsonb not null,
      redeploy boolean not null default false,
      rollback_of uuid,
      status text not null check (status in ('DEPLOYING', 'RUNNING', 'SUPERSEDED', 'FAILED')),
      stage text not null,
      events jsonb not null default '[]',
      error jsonb,
      requested_by text not null,
      workflow_id text,
      run_id text,
      started_at timestamptz not null default now(),
      finished_at timestamptz,
      unique (service_name, seq)
    );
    create index deployment_history_idx on infra.deployment (service_name, started_at desc, id desc);
    create unique index deployment_one_open_idx on infra.deployment (service_name) where status = 'DEPLOYING';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists infra.deployment; drop table if exists infra.service_instance; drop table if exists infra.service;');
}
