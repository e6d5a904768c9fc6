import { createHash } from 'node:crypto';
import { Knex } from 'knex';
import { ServiceStatus, StartedInstance } from '../../domain/deploy';
import { notFound } from '../../lib/errors';
import { jsonb } from '../db';
import {
  DEPLOYMENT_TABLE,
  DeploymentRow,
  deployInProgress,
  findDeployment,
  INSTANCE_TABLE,
  InstanceRow,
  SERVICE_TABLE,
  ServiceRow,
  SUCCESSFUL_DEPLOYS,
} from './registry';

/** The rows of the instances the gateway routes to, and of those it stopped routing to: one query each. */

/** Rows for started instances, HEALTHY from now; an instance already recorded is left as it is. */
export async function insertHealthyInstances(db: Knex, args: { serviceId: string; deploymentId: string; instances: StartedInstance[] }): Promise<void> {
  if (args.instances.length === 0) return;
  const rows = args.instances.map((instance) => ({
    id: instance.instanceId,
    service_id: args.serviceId,
    deployment_id: args.deploymentId,
    container_id: instance.containerId,
    address: instance.address,
    state: 'HEALTHY' as const,
    last_health_at: db.fn.now(),
  }));
  await db<InstanceRow>(INSTANCE_TABLE).insert(rows).onConflict('id').ignore();
}

/** Adds healthy instances of a deployment to the ones the gateway routes to; repeating adds nothing. Answers the service's name. */
export async function registerHealthyInstances(db: Knex, args: { deploymentId: string; instances: StartedInstance[] }): Promise<{ serviceName: string }> {
  const deployment = await findDeployment(db, args.deploymentId);
  if (!deployment) throw notFound(`No deployment ${args.deploymentId}.`);
  const service = await db<ServiceRow>(SERVICE_TABLE).where({ name: deployment.service_name }).first('id');
  if (!service) throw notFound(`Service ${deployment.service_name} is not registered.`);
  await insertHealthyInstances(db, { serviceId: service.id, deploymentId: deployment.id, instances: args.instances });
  return { serviceName: deployment.service_name };
}

/** Where instances listen (`host:port`), by the service they belong to: what the edge must stop routing to before they stop. */
export async function instanceAddressesByService(db: Knex, instanceIds: string[]): Promise<Map<string, string[]>> {
  const byService = new Map<string, string[]>();
  if (instanceIds.length === 0) return byService;
  const rows = (await db(`${INSTANCE_TABLE} as i`)
    .join(`${SERVICE_TABLE} as s`, 's.id', 'i.service_id')
    .whereIn('i.id', instanceIds)
    .whereNotNull('i.address')
    .select('s.name', 'i.address')) as Array<{ name: string; address: string }>;
  for (const row of rows) byService.set(row.name, [...(byService.get(row.name) ?? []), row.address]);
  return byService;
}

/** Where the instances of these deployments listen (`host:port`), whatever their state. */
export async function instanceAddressesOfDeployments(db: Knex, deploymentIds: string[]): Promise<string[]> {
  if (deploymentIds.length === 0) return [];
  return db<InstanceRow>(INSTANCE_TABLE).whereIn('deployment_id', deploymentIds).whereNotNull('address').pluck('address');
}

/**
 * The switch: in one transaction the new instances become the ones the gateway routes to, the instances
 * they replace start draining, and the service takes the deploy's image and settings. Repeating it changes
 * nothing more. Answers the replaced instances.
 */
export async function switchToDeployment(db: Knex, args: { deploymentId: string; instances: StartedInstance[] }): Promise<{ replacedInstanceIds: string[] }> {
  return db.transaction(async (trx) => {
    const deployment = await findDeployment(trx, args.deploymentId);
    if (!deployment) throw notFound(`No deployment ${args.deploymentId}.`);
    const service = await trx<ServiceRow>(SERVICE_TABLE).where({ name: deployment.service_name }).forUpdate().first();
    if (!service) throw notFound(`Service ${deployment.service_name} is not registered.`);
    const newIds = args.instances.map((instance) => instance.instanceId);
    const replaced = await trx<InstanceRow>(INSTANCE_TABLE).where({ service_id: service.id }).whereNotIn('id', newIds).select('id');
    await trx<InstanceRow>(INSTANCE_TABLE)
      .whereIn(
        'id',
        replaced.map((row) => row.id),
      )
      .update({ state: 'DRAINING' });
    await insertHealthyInstances(trx, { serviceId: service.id, deploymentId: deployment.id, instances: args.instances });
    const { settings } = deployment;
    await trx<ServiceRow>(SERVICE_TABLE)
      .where({ id: service.id })
      .update({
        kind: deployment.kind,
        image: deployment.image,
        port: settings.port,
        host_port: settings.hostPort,
        env: jsonb(trx, settings.env),
        description: settings.description,
        group: settings.group,
        health_path: settings.healthPath,
        status: 'RUNNING',
        current_deployment_id: deployment.id,
        limits: settings.limits ? jsonb(trx, settings.limits) : service.limits ? jsonb(trx, service.limits) : null,
        // A rollout's canary is the current version from here: no share of its own (its cluster is retired
        // after the drain); any other deployment's canary is gone.
        canary_deployment_id: service.canary_deployment_id === deployment.id ? deployment.id : null,
        canary_weight: 0,
        updated_at: trx.fn.now(),
      });
    await trx<DeploymentRow>(DEPLOYMENT_TABLE)
      .where({ service_name: deployment.service_name, status: 'RUNNING' })
      .whereNot({ id: deployment.id })
      .update({ status: 'SUPERSEDED' });
    return { replacedInstanceIds: replaced.map((row) => row.id as string) };
  });
}

/** Stops routing new requests to instances (they finish what they already have). */
export async function drainInstanceRows(db: Knex, instanceIds: string[]): Promise<void> {
  if (instanceIds.length > 0) await db<InstanceRow>(INSTANCE_TABLE).whereIn('id', instanceIds).update({ state: 'DRAINING' });
}

/** Takes instances out of the registry. */
export async function deleteInstanceRows(db: Knex, instanceIds: string[]): Promise<void> {
  if (instanceIds.length > 0) await db<InstanceRow>(INSTANCE_TABLE).whereIn('id', instanceIds).delete();
}

/** Instance rows of a service that belong to none of the `keep` deployments (left by a run that died). */
export async function orphanInstanceIds(db: Knex, args: { serviceId: string; keep: string[] }): Promise<string[]> {
  return db<InstanceRow>(INSTANCE_TABLE).where({ service_id: args.serviceId }).whereNotIn('deployment_id', args.keep).pluck('id');
}

/** The instances of a service not stopped yet, for a deploy that replaces them. */
export async function liveInstanceIds(db: Knex, serviceId: string): Promise<string[]> {
  return db<InstanceRow>(INSTANCE_TABLE).where({ service_id: serviceId }).whereNotIn('state', ['DEAD', 'OOM_KILLED']).pluck('id');
}

/** Whether a service had a successful deploy before this one (sequence number `seq`). */
export async function hadSuccessfulDeployBefore(db: Knex, args: { serviceName: string; seq: number }): Promise<boolean> {
  return Boolean(
    await db<DeploymentRow>(DEPLOYMENT_TABLE)
      .where({ service_name: args.serviceName })
      .whereIn('status', SUCCESSFUL_DEPLOYS)
      .andWhere('seq', '<', args.seq)
      .first('id'),
  );
}

/** The images of a service's last `count` successful deploys (kept for rollback). */
export async function recentSuccessfulImages(db: Knex, args: { serviceName: string; count: number }): Promise<string[]> {
  return db<DeploymentRow>(DEPLOYMENT_TABLE)
    .where({ service_name: args.serviceName })
    .whereIn('status', SUCCESSFUL_DEPLOYS)
    .orderBy('seq', 'desc')
    .limit(args.count)
    .pluck('image');
}

/** Every image the platform built for the service (its JAR deploys'), old and new. */
export async function builtImages(db: Knex, serviceName: string): Promise<string[]> {
  return db<DeploymentRow>(DEPLOYMENT_TABLE).where({ service_name: serviceName, build_from_jar: true }).distinct('image').pluck('image');
}

/** A running service to survey, with its instances that should serve or were found dead; null when not running. */
export async function serviceToSurvey(db: Knex, serviceName: string): Promise<{ service: ServiceRow; instances: InstanceRow[] } | null> {
  const service: ServiceRow | undefined = await db<ServiceRow>(SERVICE_TABLE).where({ name: serviceName, dynamic: true }).first();
  if (!service || !['RUNNING', 'DEGRADED'].includes(service.status) || !service.current_deployment_id) return null;
  // A deploy in progress (a rollout's canary among them) registers instances of its own: they are its to
  // keep or let go, never a scale's to count (a scale run started on Temporal directly could otherwise drain them).
  if (await deployInProgress(db, service)) return null;
  const instances: InstanceRow[] = await db<InstanceRow>(INSTANCE_TABLE)
    .where({ service_id: service.id })
    .whereIn('state', ['HEALTHY', 'DEAD', 'OOM_KILLED'])
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return { service, instances };
}

/** Records a survey: dead instances leave the gateway at once (those killed for memory say so); the live ones were seen healthy now. */
export async function recordSurvey(db: Knex, args: { alive: string[]; dead: string[]; oomKilled?: string[] }): Promise<void> {
  const oomKilled = args.oomKilled ?? [];
  const dead = args.dead.filter((id) => !oomKilled.includes(id));
  if (dead.length > 0) await db<InstanceRow>(INSTANCE_TABLE).whereIn('id', dead).update({ state: 'DEAD' });
  if (oomKilled.length > 0) await db<InstanceRow>(INSTANCE_TABLE).whereIn('id', oomKilled).update({ state: 'OOM_KILLED' });
  await db<InstanceRow>(INSTANCE_TABLE).whereIn('id', args.alive).update({ last_health_at: db.fn.now() });
}

/** RUNNING or DEGRADED, for a service that is running (a scale or reconcile's outcome). */
export async function setRunningServiceStatus(db: Knex, args: { serviceName: string; status: Extract<ServiceStatus, 'RUNNING' | 'DEGRADED'> }): Promise<void> {
  await db<ServiceRow>(SERVICE_TABLE)
    .where({ name: args.serviceName })
    .whereIn('status', ['RUNNING', 'DEGRADED'])
    .update({ status: args.status, updated_at: db.fn.now() });
}

/** Undeploy's first step: the gateway stops routing to the service. Answers the addresses it routed to. */
export async function deregisterServiceInstances(db: Knex, serviceName: string): Promise<string[]> {
  const service = await db<ServiceRow>(SERVICE_TABLE).where({ name: serviceName, dynamic: true }).first('id');
  if (!service) return [];
  const removed = (await db<InstanceRow>(INSTANCE_TABLE).where({ service_id: service.id }).delete().returning('address')) as Array<{ address: string | null }>;
  return removed.flatMap((row) => (row.address ? [row.address] : []));
}

/** Undeploy's last step: the registry forgets the service (its deploy history stays). */
export async function deleteServiceRow(db: Knex, serviceName: string): Promise<{ slug: string } | null> {
  const [deleted] = (await db<ServiceRow>(SERVICE_TABLE).where({ name: serviceName, dynamic: true }).delete().returning('slug')) as Array<{ slug: string }>;
  return deleted ?? null;
}

/** Dynamic services that are running and not in the middle of a deploy (by the one rule, deployInProgress). */
export async function reconcilableServiceNames(db: Knex): Promise<string[]> {
  const running = (await db<ServiceRow>(SERVICE_TABLE)
    .where({ dynamic: true })
    .whereIn('status', ['RUNNING', 'DEGRADED'])
    .orderBy('name')
    .select('name', 'status')) as Array<Pick<ServiceRow, 'name' | 'status'>>;
  const idle: string[] = [];
  for (const service of running) if (!(await deployInProgress(db, service))) idle.push(service.name);
  return idle;
}

/** The registry's id of a swarm task's instance: a UUID made from the task's id, the same on every call. */
export function taskInstanceId(taskId: string): string {
  const hex = createHash('sha256').update(`swarm-task:${taskId}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** A swarm task whose container runs, as the registry keeps it. */
export interface TaskInstance extends StartedInstance {
  deploymentId: string;
}

/**
 * Makes a swarm service's registry rows what the swarm reports (the swarm driver): a running task with no
 * row joins the ones the gateway routes to, and a row whose task no longer runs leaves at once. A row being
 * drained stays drained while its task runs, and a service being undeployed gains no row. Answers the
 * instances that left.
 */
export async function syncTaskInstances(db: Knex, args: { serviceName: string; running: TaskInstance[] }): Promise<{ left: string[] }> {
  return db.transaction(async (trx) => {
    const service = await trx<ServiceRow>(SERVICE_TABLE).where({ name: args.serviceName, dynamic: true }).forUpdate().first('id', 'status');
    if (!service) return { left: [] };
    // Only what changed is written: every write notifies the edge's control plane, and the swarm's tasks are followed twice a second.
    const registered: string[] = await trx<InstanceRow>(INSTANCE_TABLE).where({ service_id: service.id }).pluck('id');
    const running = service.status === 'UNDEPLOYING' ? [] : args.running;
    const runningIds = new Set(running.map((task) => task.instanceId));
    const left = registered.filter((id) => !runningIds.has(id));
    if (left.length > 0) await trx<InstanceRow>(INSTANCE_TABLE).whereIn('id', left).delete();
    const joined = running.filter((task) => !registered.includes(task.instanceId));
    if (joined.length > 0) {
      await trx<InstanceRow>(INSTANCE_TABLE)
        .insert(
          joined.map((task) => ({
            id: task.instanceId,
            service_id: service.id,
            deployment_id: task.deploymentId,
            container_id: task.containerId,
            address: task.address,
            state: 'HEALTHY' as const,
            last_health_at: trx.fn.now(),
          })),
        )
        .onConflict('id')
        .ignore();
    }
    return { left };
  });
}
