import { Knex } from 'knex';
import { ServiceLimits, ServiceStatus } from '../../domain/deploy';
import { jsonb } from '../db';
import { Page, PageRequest, paginate } from '../paging';
import { DEPLOYMENT_TABLE, DeploymentRow, INSTANCE_TABLE, InstanceRow, SERVICE_TABLE, ServiceRow, SUCCESSFUL_DEPLOYS } from './registry';

/** What the registry answers about services: lists, counts, history, rollback targets, desired state. */

/** A page of services, core and deployed, newest first, with how many healthy instances each has. */
export async function servicesWithHealthyCounts(db: Knex, page: PageRequest): Promise<Page<{ service: ServiceRow; healthy: number }>> {
  const services = await paginate<ServiceRow>({ query: db(SERVICE_TABLE).select('*'), ...page, timeColumn: 'created_at', idColumn: 'id' });
  const ids = services.items.map((service) => service.id);
  const counts = (await db<InstanceRow>(INSTANCE_TABLE)
    .whereIn('service_id', ids)
    .where({ state: 'HEALTHY' })
    .groupBy('service_id')
    .select('service_id', db.raw('count(*)::int as n'))) as Array<{ service_id: string; n: number }>;
  const healthy = new Map(counts.map((row) => [row.service_id, row.n]));
  return { items: services.items.map((service) => ({ service, healthy: healthy.get(service.id) ?? 0 })), nextCursor: services.nextCursor };
}

export async function instancesOf(db: Knex, serviceId: string): Promise<InstanceRow[]> {
  return db<InstanceRow>(INSTANCE_TABLE)
    .where({ service_id: serviceId })
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
}

/** The instances whose containers run a service now: healthy ones, and those draining what was routed to them. */
export async function runningInstancesOf(db: Knex, serviceId: string): Promise<InstanceRow[]> {
  return db<InstanceRow>(INSTANCE_TABLE)
    .where({ service_id: serviceId })
    .whereIn('state', ['HEALTHY', 'DRAINING'])
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
}

export async function setDesiredInstances(db: Knex, args: { serviceId: string; instances: number }): Promise<void> {
  await db<ServiceRow>(SERVICE_TABLE).where({ id: args.serviceId }).update({ desired_instances: args.instances, updated_at: db.fn.now() });
}

export async function setServiceStatusRow(db: Knex, args: { serviceId: string; status: ServiceStatus }): Promise<void> {
  await db<ServiceRow>(SERVICE_TABLE).where({ id: args.serviceId }).update({ status: args.status, updated_at: db.fn.now() });
}

/** A service's deploys, newest first. */
export async function deployHistory(db: Knex, args: { serviceName: string; page: PageRequest }): Promise<Page<DeploymentRow>> {
  const rows = db<DeploymentRow>(DEPLOYMENT_TABLE).select(`${DEPLOYMENT_TABLE}.*`).where({ service_name: args.serviceName });
  return paginate<DeploymentRow>({ query: rows, ...args.page, timeColumn: 'started_at', idColumn: 'id' });
}

/**
 * The successful deploy a rollback brings back: the one named, or the last one before the current that ran
 * another image.
 */
export async function rollbackTarget(
  db: Knex,
  args: { serviceName: string; deploymentId?: string; current?: Pick<DeploymentRow, 'seq' | 'image'> },
): Promise<DeploymentRow | undefined> {
  const successful = db<DeploymentRow>(DEPLOYMENT_TABLE).where({ service_name: args.serviceName }).whereIn('status', SUCCESSFUL_DEPLOYS);
  if (args.deploymentId) return successful.andWhere({ id: args.deploymentId }).first();
  return successful
    .andWhere('seq', '<', args.current?.seq ?? Number.MAX_SAFE_INTEGER)
    .whereNot({ image: args.current?.image ?? '' })
    .orderBy('seq', 'desc')
    .first();
}

/** Running services with a healthy instance: one instance address each, to look for an OpenAPI document. */
export async function runningServiceAddresses(db: Knex): Promise<Array<{ name: string; slug: string; address: string }>> {
  return db(`${SERVICE_TABLE} as s`)
    .join(`${INSTANCE_TABLE} as i`, 'i.service_id', 's.id')
    .where({ 's.dynamic': true, 's.status': 'RUNNING', 'i.state': 'HEALTHY' })
    .distinctOn('s.name')
    .orderBy([{ column: 's.name' }, { column: 'i.created_at' }])
    .select('s.name', 's.slug', 'i.address');
}

/** The limits a service's instances are to have from now. */
export async function setServiceLimits(db: Knex, args: { serviceId: string; limits: ServiceLimits }): Promise<void> {
  await db<ServiceRow>(SERVICE_TABLE)
    .where({ id: args.serviceId })
    .update({ limits: jsonb(db, args.limits), updated_at: db.fn.now() });
}
