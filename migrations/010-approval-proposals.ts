import { Knex } from 'knex';

/**
 * A decision reaches the publish workflow only through the decide endpoint: the endpoint records it here
 * as proposed, and the run confirms it into `workflow.approval.decisions` (the record of who decided)
 * before it acts. A proposal that no run confirmed (Temporal unreachable, a stage decided meanwhile)
 * stays here unconfirmed and counts for nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table workflow.approval_proposal (
      id uuid primary key default gen_random_uuid(),
      correlation_id uuid not null references workflow.approval (correlation_id) on delete cascade,
      stage integer not null,
      decision text not null check (decision in ('APPROVED', 'REJECTED')),
      decided_by text not null,
      decided_by_name text,
      comment text,
      created_at timestamptz not null default now(),
      confirmed_at timestamptz
    );
    create index approval_proposal_correlation_idx on workflow.approval_proposal (correlation_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop table if exists workflow.approval_proposal');
}
