import { Knex } from 'knex';

/**
 * Limits per service (memory, CPUs, processes; null: the platform's defaults), and a history of what
 * became of each service's instances: started, healthy, exited, killed for memory, limits changed. An event
 * carries a key that makes recording it twice change nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table infra.service add column limits jsonb;
    alter table infra.service_instance drop constraint service_instance_state_check,
      add constraint service_instance_state_check check (state in ('HEALTHY', 'DRAINING', 'DEAD', 'OOM_KILLED'));
    create table infra.service_event (
      id bigserial primary key,
      service_name text not null,
      instance_id uuid,
      kind text not null check (kind in ('STARTED', 'HEALTHY', 'UNHEALTHY', 'EXITED', 'OOM_KILLED', 'RESTARTED', 'ROLLED_BACK', 'LIMITS_CHANGED')),
      detail text not null,
      dedupe_key text not null unique,
      at timestamptz not null default now()
    );
    create index service_event_history_idx on infra.service_event (service_name, at desc, id desc);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop table if exists infra.service_event;
    update infra.service_instance set state = 'DEAD' where state = 'OOM_KILLED';
    alter table infra.service_instance drop constraint service_instance_state_check,
      add constraint service_instance_state_check check (state in ('HEALTHY', 'DRAINING', 'DEAD'));
    alter table infra.service drop column limits;
  `);
}
