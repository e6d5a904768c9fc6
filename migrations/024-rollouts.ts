import { Knex } from 'knex';

/**
 * Canary rollouts: a deployment keeps the rollout it was asked for and where it stands (step, share, the
 * figures last judged); a service names the deployment whose instances run beside its current ones as a
 * canary, and the share of requests the edge gives them. A rollout that fails ends REVERTED; an update the
 * swarm rolled back by itself ends ROLLED_BACK (it was FAILED, which said less).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table infra.deployment
      add column rollout jsonb,
      add column rollout_state jsonb,
      drop constraint deployment_status_check,
      add constraint deployment_status_check check (status in ('DEPLOYING', 'RUNNING', 'SUPERSEDED', 'FAILED', 'REVERTED', 'ROLLED_BACK'));
    alter table infra.service
      add column canary_deployment_id uuid,
      add column canary_weight smallint not null default 0 check (canary_weight between 0 and 100);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table infra.service drop column canary_weight, drop column canary_deployment_id;
    update infra.deployment set status = 'FAILED' where status in ('REVERTED', 'ROLLED_BACK');
    alter table infra.deployment
      drop constraint deployment_status_check,
      add constraint deployment_status_check check (status in ('DEPLOYING', 'RUNNING', 'SUPERSEDED', 'FAILED')),
      drop column rollout_state,
      drop column rollout;
  `);
}
