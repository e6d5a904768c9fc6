import { ServiceOperation } from './service-operations';
import { Static } from '@sinclair/typebox';
import { maskEnv } from '../../../domain/deploy-secrets';
import { DeploymentRow, InstanceRow, ServiceRow } from '../../../data/deploy/registry';
import { DeploymentSchema, HistoryItemSchema, InstanceSchema, ServiceDetailSchema, ServiceSummarySchema } from './schemas';

const iso = (value: Date | string) => new Date(value).toISOString();
const isoOrNull = (value: Date | string | null) => (value === null ? null : iso(value));

export function presentDeployment(row: DeploymentRow): Static<typeof DeploymentSchema> {
  return {
    deploymentId: row.id,
    serviceName: row.service_name,
    stage: row.stage,
    status: row.status,
    events: row.events.map((event) => ({ at: event.at, stage: event.stage, message: event.message })),
    ...(row.error ? { error: { stage: row.error.stage, reason: row.error.reason, lastLogLines: row.error.lastLogLines } } : {}),
    ...(row.rollout ? { rollout: row.rollout, rolloutState: row.rollout_state } : {}),
  };
}

export function presentHistoryItem(row: DeploymentRow): Static<typeof HistoryItemSchema> {
  return {
    deploymentId: row.id,
    image: row.image,
    status: row.status,
    stage: row.stage,
    startedAt: iso(row.started_at),
    finishedAt: isoOrNull(row.finished_at),
    requestedBy: row.requested_by,
    rollbackOf: row.rollback_of,
  };
}

/** Core modules run inside the API process that answers, so they count as one running instance. */
export function presentService(row: ServiceRow, runningInstances: number): Static<typeof ServiceSummarySchema> {
  return {
    name: row.name,
    slug: row.slug,
    kind: row.kind,
    dynamic: row.dynamic,
    group: row.group,
    status: row.status,
    desiredInstances: row.desired_instances,
    runningInstances: row.dynamic ? runningInstances : 1,
    image: row.image,
    port: row.port,
    createdAt: iso(row.created_at),
  };
}

function presentInstance(row: InstanceRow): Static<typeof InstanceSchema> {
  return {
    id: row.id,
    containerId: row.container_id,
    address: row.address,
    state: row.state,
    lastHealthAt: isoOrNull(row.last_health_at),
    createdAt: iso(row.created_at),
  };
}

/** One service with its instances; the values of secret-looking env vars are masked. */
export function presentServiceDetail(row: ServiceRow, instances: InstanceRow[], operations: ServiceOperation[] | null): Static<typeof ServiceDetailSchema> {
  return {
    ...presentService(row, instances.filter((instance) => instance.state === 'HEALTHY').length),
    hostPort: row.host_port,
    healthPath: row.health_path,
    description: row.description,
    env: maskEnv(row.env ?? {}),
    currentDeploymentId: row.current_deployment_id,
    updatedAt: iso(row.updated_at),
    instances: instances.map(presentInstance),
    operations,
  };
}
