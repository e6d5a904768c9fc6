import { Knex } from 'knex';

/**
 * The edge's control plane rewrites Envoy's configuration when the registry changes, wherever the change
 * was made (the API, the deployments worker, an operator's SQL): every write to the service or instance
 * tables notifies `opsflow_registry`, once per statement.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create or replace function infra.notify_registry_changed() returns trigger language plpgsql as $$
    begin
      perform pg_notify('opsflow_registry', tg_table_name);
      return null;
    end $$;
    create trigger service_changed after insert or update or delete on infra.service
      for each statement execute function infra.notify_registry_changed();
    create trigger service_instance_changed after insert or update or delete on infra.service_instance
      for each statement execute function infra.notify_registry_changed();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger if exists service_changed on infra.service;
    drop trigger if exists service_instance_changed on infra.service_instance;
    drop function if exists infra.notify_registry_changed();
  `);
}
