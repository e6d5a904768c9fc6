import { Knex } from 'knex';

/**
 * Scheduled publishes and archives. The timer is the publish workflow's; this row is what the platform
 * lists as due, and where a cancel is recorded (by whom) before the run is told: a cancel that reaches the
 * run without a recorded row changes nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table workflow.scheduled_change (
      run_id text primary key,
      workflow_id text not null,
      component_type text not null,
      resource_id text not null,
      site_id text not null,
      action text not null check (action in ('PUBLISH', 'ARCHIVE')),
      revision integer,
      due_at timestamptz not null,
      requested_by text not null,
      status text not null default 'SCHEDULED' check (status in ('SCHEDULED', 'DONE', 'CANCELLED', 'REJECTED')),
      cancel_requested_by text,
      created_at timestamptz not null default now(),
      finished_at timestamptz
    );
    create index scheduled_change_due_idx on workflow.scheduled_change (site_id, due_at, run_id) where status = 'SCHEDULED';
    create index scheduled_change_due_all_idx on workflow.scheduled_change (due_at, run_id) where status = 'SCHEDULED';
    create unique index scheduled_change_open_key on workflow.scheduled_change (component_type, resource_id) where status = 'SCHEDULED';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists workflow.scheduled_change');
}
