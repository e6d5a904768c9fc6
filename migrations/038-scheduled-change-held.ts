import { Knex } from 'knex';

/**
 * A scheduled publish that needed approval only at its time ends its schedule HELD: from then on it is an
 * approval request like any other, so it no longer blocks a new schedule of its item (#58, finding 1).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table workflow.scheduled_change drop constraint scheduled_change_status_check;
    alter table workflow.scheduled_change add constraint scheduled_change_status_check
      check (status in ('SCHEDULED', 'DONE', 'CANCELLED', 'REJECTED', 'HELD'));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    update workflow.scheduled_change set status = 'DONE' where status = 'HELD';
    alter table workflow.scheduled_change drop constraint scheduled_change_status_check;
    alter table workflow.scheduled_change add constraint scheduled_change_status_check
      check (status in ('SCHEDULED', 'DONE', 'CANCELLED', 'REJECTED'));
  `);
}
