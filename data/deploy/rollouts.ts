import { Knex } from 'knex';
import { RolloutState, StartedInstance } from '../../domain/deploy';
import { notFound } from '../../lib/errors';
import { jsonb } from '../db';
import { insertHealthyInstances } from './instances';
import { DEPLOYMENT_TABLE, DeploymentRow, findDeployment, INSTANCE_TABLE, InstanceRow, SERVICE_TABLE, ServiceRow } from './registry';

/** A canary rollout's rows: the new instances beside the current ones, their share of requests, the outcome. */

/**
 * The canary joins the edge: in one transaction the service names the deployment as its canary, with no
 * share of requests yet, and its instances are registered (so they never join the current version's
 * cluster, not even for a moment). Repeating it changes nothing more. Answers the service's name.
 */
export async function registerCanary(db: Knex, args: { deploymentId: string; instances: StartedInstance[] }): Promise<{ serviceName: string }> {
  return db.transaction(async (trx) => {
    const deployment = await findDeployment(trx, args.deploymentId);
    if (!deployment) throw notFound(`No deployment ${args.deploymentId}.`);
    const service = await trx<ServiceRow>(SERVICE_TABLE).where({ name: deployment.service_name }).forUpdate().first();
    if (!service) throw notFound(`Service ${deployment.service_name} is not registered.`);
    if (service.canary_deployment_id !== deployment.id)
      await trx<ServiceRow>(SERVICE_TABLE).where({ id: service.id }).update({ canary_deployment_id: deployment.id, canary_weight: 0 });
    await insertHealthyInstances(trx, { serviceId: service.id, deploymentId: deployment.id, instances: args.instances });
    return { serviceName: deployment.service_name };
  });
}

/** A service's deploy still running with a rollout, if any: the run an operator's promote or abort goes to. */
export async function openRollout(db: Knex, serviceName: string): Promise<DeploymentRow | undefined> {
  return db<DeploymentRow>(DEPLOYMENT_TABLE).where({ service_name: serviceName, status: 'DEPLOYING' }).whereNotNull('rollout').first();
}

/** The canary's share of requests, in percent; only while the deployment is the service's canary. */
export async function setCanaryWeight(db: Knex, args: { deploymentId: string; weight: number }): Promise<void> {
  await db<ServiceRow>(SERVICE_TABLE)
    .where({ canary_deployment_id: args.deploymentId })
    .whereNot({ canary_weight: args.weight })
    .update({ canary_weight: args.weight, updated_at: db.fn.now() });
}

/** Where the rollout stands, for the API and the console; the judge's figures included. */
export async function recordRolloutState(db: Knex, args: { deploymentId: string; state: RolloutState }): Promise<void> {
  await db<DeploymentRow>(DEPLOYMENT_TABLE)
    .where({ id: args.deploymentId })
    .update({ rollout_state: jsonb(db, args.state) });
}

/**
 * A rollout reverted: the deployment ends REVERTED with what failed it, and the service has no canary any
 * more (it kept serving its current version throughout). Only a DEPLOYING row changes: repeating it, or a
 * late call, changes nothing.
 */
export async function recordRolloutReverted(db: Knex, args: { deploymentId: string; at: string; reason: string }): Promise<void> {
  await db.transaction(async (trx) => {
    const event = { at: args.at, stage: 'REVERTED', message: args.reason };
    const reverted = await trx<DeploymentRow>(DEPLOYMENT_TABLE)
      .where({ id: args.deploymentId, status: 'DEPLOYING' })
      .update({
        status: 'REVERTED',
        stage: 'REVERTED',
        error: jsonb(trx, { stage: 'CANARY', reason: args.reason, lastLogLines: [] }),
        finished_at: trx.fn.now(),
        events: trx.raw('events || ?::jsonb', [JSON.stringify([event])]),
      })
      .returning('service_name');
    if (reverted.length === 0) return;
    await trx<InstanceRow>(INSTANCE_TABLE).where({ deployment_id: args.deploymentId }).update({ state: 'DRAINING' });
    await trx<ServiceRow>(SERVICE_TABLE)
      .where({ canary_deployment_id: args.deploymentId })
      .update({ canary_deployment_id: null, canary_weight: 0, updated_at: trx.fn.now() });
  });
}

/** A finished rollout's canary cluster goes, once nothing routes to it (the switch made it the current version). */
export async function retireCanary(db: Knex, args: { deploymentId: string }): Promise<void> {
  await db<ServiceRow>(SERVICE_TABLE)
    .where({ canary_deployment_id: args.deploymentId, current_deployment_id: args.deploymentId })
    .update({ canary_deployment_id: null, canary_weight: 0, updated_at: db.fn.now() });
}
