import { Knex } from 'knex';
import { jsonb } from '../db';
import {
  CORE_MODULES,
  DEFAULT_HEALTH_PATH,
  DeployError,
  DeployNotify,
  EdgeService,
  DeployEvent,
  DeploymentStatus,
  DeployStage,
  RolloutPlan,
  RolloutState,
  ServiceLimits,
  ServiceKind,
  ServiceStatus,
  slugOf,
} from '../../domain/deploy';

export const SERVICE_TABLE = 'infra.service';
export const INSTANCE_TABLE = 'infra.service_instance';
export const DEPLOYMENT_TABLE = 'infra.deployment';

export interface ServiceRow {
  id: string;
  name: string;
  slug: string;
  kind: ServiceKind;
  dynamic: boolean;
  group: string;
  image: string | null;
  port: number | null;
  host_port: number | null;
  env: Record<string, string>;
  description: string | null;
  desired_instances: number;
  status: ServiceStatus;
  health_path: string | null;
  current_deployment_id: string | null;
  /** A rollout's deployment, whose instances the edge routes on a cluster of their own, `canary_weight` percent of requests. */
  canary_deployment_id: string | null;
  canary_weight: number;
  /** What each instance may use; null: the platform's defaults (DEPLOY_MEMORY_MB, DEPLOY_CPUS, DEPLOY_PIDS_LIMIT). */
  limits: ServiceLimits | null;
  /** Who hears of a deploy of it that failed, reverted or was rolled back; null: nobody. */
  notify: DeployNotify | null;
  created_at: Date;
  updated_at: Date;
}

/** DEAD and OOM_KILLED (killed by the kernel for memory): found so by a survey, until the reconcile replaces them. */
export type InstanceState = 'HEALTHY' | 'DRAINING' | 'DEAD' | 'OOM_KILLED';

export interface InstanceRow {
  id: string;
  service_id: string;
  deployment_id: string;
  container_id: string;
  address: string;
  state: InstanceState;
  last_health_at: Date | null;
  /** Since when the survey has seen its health check fail; null while it passes. */
  failing_since: Date | null;
  created_at: Date;
}

/** What a deploy runs: everything the container is created from. */
export interface DeploySettings {
  port: number;
  hostPort: number | null;
  /** Null: the default health path, where any HTTP answer also counts as up. */
  healthPath: string | null;
  group: string;
  description: string | null;
  env: Record<string, string>;
  /** Limits asked for with this deploy; absent: the service keeps the ones it has. */
  limits?: ServiceLimits;
}

export interface DeploymentRow {
  id: string;
  service_name: string;
  seq: number;
  kind: 'JAR' | 'IMAGE';
  image: string;
  build_from_jar: boolean;
  settings: DeploySettings;
  redeploy: boolean;
  rollback_of: string | null;
  status: DeploymentStatus;
  stage: DeployStage;
  events: DeployEvent[];
  error: DeployError | null;
  requested_by: string;
  /** The canary rollout asked for (a redeploy only), and where it stands. */
  rollout: RolloutPlan | null;
  rollout_state: RolloutState | null;
  workflow_id: string | null;
  run_id: string | null;
  started_at: Date;
  finished_at: Date | null;
}

/** Statuses of deploys that reached RUNNING: the candidates for a rollback. */
export const SUCCESSFUL_DEPLOYS: DeploymentStatus[] = ['RUNNING', 'SUPERSEDED'];

export async function findService(db: Knex, name: string): Promise<ServiceRow | undefined> {
  return db<ServiceRow>(SERVICE_TABLE).where({ name }).first();
}

export async function findDeployment(db: Knex, id: string): Promise<DeploymentRow | undefined> {
  return db<DeploymentRow>(DEPLOYMENT_TABLE).where({ id }).first();
}

/**
 * Every deployed service as the edge routes it: slug, health path, and its healthy instances' addresses. In a
 * rollout the new deployment's instances are its canary, on a cluster of their own. At a share of 100 they
 * are also among the service's own instances (taking no requests there), so that the switch that ends the
 * rollout finds them health-checked on the cluster it routes to; after the switch (the canary is the current
 * deployment) the canary's cluster stays until it is retired, so no route ever names a cluster being removed.
 */
export async function edgeServices(db: Knex): Promise<EdgeService[]> {
  const rows = (await db(`${SERVICE_TABLE} as s`)
    .leftJoin(`${INSTANCE_TABLE} as i`, function () {
      this.on('i.service_id', '=', 's.id').andOnVal('i.state', '=', 'HEALTHY');
    })
    .leftJoin(`${DEPLOYMENT_TABLE} as c`, 'c.id', 's.canary_deployment_id')
    .leftJoin(`${DEPLOYMENT_TABLE} as d`, 'd.id', 'i.deployment_id')
    .where('s.dynamic', true)
    .select(
      's.slug',
      's.name',
      's.health_path',
      's.current_deployment_id',
      's.canary_deployment_id',
      's.canary_weight',
      db.raw(`c.settings->>'healthPath' as canary_health_path`),
      'i.address',
      'i.deployment_id',
      db.raw('(d.rollout is not null) as of_rollout'),
    )
    .orderBy([{ column: 's.slug' }, { column: 'i.created_at' }, { column: 'i.id' }])) as Array<{
    slug: string;
    name: string;
    health_path: string | null;
    current_deployment_id: string | null;
    canary_deployment_id: string | null;
    canary_weight: number;
    canary_health_path: string | null;
    address: string | null;
    deployment_id: string | null;
    of_rollout: boolean | null;
  }>;
  const services = new Map<string, EdgeService>();
  for (const row of rows) {
    const service: EdgeService = services.get(row.slug) ?? {
      name: row.name,
      slug: row.slug,
      healthPath: row.health_path ?? DEFAULT_HEALTH_PATH,
      instances: [],
      ...(row.canary_deployment_id
        ? {
            canary: {
              instances: [],
              weight: row.canary_deployment_id === row.current_deployment_id ? 0 : row.canary_weight,
              healthPath: row.canary_health_path ?? DEFAULT_HEALTH_PATH,
            },
          }
        : {}),
    };
    services.set(row.slug, service);
    const at = row.address ? /^(.+):(\d+)$/.exec(row.address) : null;
    if (!at) continue;
    const instance = { host: at[1], port: Number(at[2]) };
    // A rollout's instances serve only as its canary, or once it is the current version: the swarm's tasks
    // join the registry as they start, before the rollout names them its canary (and after it ended otherwise).
    // And while a rollout runs, or its canary is being retired, no third version serves: a task of the version
    // the promote replaced, restarted by the swarm before the service's own swarm service rolled, stays out.
    const otherVersion = row.deployment_id !== row.current_deployment_id && row.deployment_id !== row.canary_deployment_id;
    if (otherVersion && (row.of_rollout || row.canary_deployment_id)) continue;
    const isCanary = service.canary !== undefined && row.deployment_id === row.canary_deployment_id;
    if (isCanary) service.canary!.instances.push(instance);
    if (!isCanary || row.canary_weight === 100 || row.canary_deployment_id === row.current_deployment_id) service.instances.push(instance);
  }
  return [...services.values()];
}

/** Registers the platform's own modules as CORE services (not dynamic), so their slugs stay theirs. */
export async function registerCoreServices(db: Knex): Promise<void> {
  await db<ServiceRow>(SERVICE_TABLE)
    .insert(
      CORE_MODULES.map((module) => ({
        name: module,
        slug: slugOf(module),
        kind: 'CORE',
        dynamic: false,
        description: `Opsflow ${module} module`,
        desired_instances: 1,
        status: 'RUNNING',
      })),
    )
    .onConflict('name')
    .ignore();
}

/**
 * Ends a deploy that failed, after its undo steps ran (or after its run died unfinished): the deployment
 * becomes FAILED with its reason, a service that never ran loses its registry row (it is deployable
 * again as new), and one that did keeps serving its previous version. Only a DEPLOYING row changes, so
 * repeating it, or a late call after the run ended otherwise, changes nothing.
 */
export async function recordDeployFailure(
  db: Knex,
  args: { deploymentId: string; at: string; error: DeployError; status?: Extract<DeploymentStatus, 'FAILED' | 'ROLLED_BACK'> },
): Promise<void> {
  await db.transaction(async (trx) => {
    const deployment = await findDeployment(trx, args.deploymentId);
    if (!deployment) return;
    const event = { at: args.at, stage: 'FAILED', message: `${args.error.stage}: ${args.error.reason}` };
    const failed = await trx<DeploymentRow>(DEPLOYMENT_TABLE)
      .where({ id: deployment.id, status: 'DEPLOYING' })
      .update({
        status: args.status ?? 'FAILED',
        stage: 'FAILED',
        error: jsonb(trx, args.error),
        finished_at: trx.fn.now(),
        events: trx.raw('events || ?::jsonb', [JSON.stringify([event])]),
      });
    if (Number(failed) === 0) return;
    // Instances a dead run left registered (a canary's, a redeploy's before its switch) never serve as the
    // service's own: the edge stops routing to them at once; their containers go with the run's leftovers.
    await trx<InstanceRow>(INSTANCE_TABLE).where({ deployment_id: deployment.id }).update({ state: 'DRAINING' });
    const service = await trx<ServiceRow>(SERVICE_TABLE).where({ name: deployment.service_name }).forUpdate().first();
    if (!service) return;
    if (service.canary_deployment_id === deployment.id)
      await trx<ServiceRow>(SERVICE_TABLE).where({ id: service.id }).update({ canary_deployment_id: null, canary_weight: 0 });
    if (service.current_deployment_id === null) await trx<ServiceRow>(SERVICE_TABLE).where({ id: service.id }).delete();
    else if (service.status === 'DEPLOYING')
      await trx<ServiceRow>(SERVICE_TABLE).where({ id: service.id }).update({ status: 'RUNNING', updated_at: trx.fn.now() });
  });
}

/** The deployments of a service still marked DEPLOYING, with the run that should be finishing each. */
export async function openDeployments(db: Knex, serviceName: string): Promise<Array<Pick<DeploymentRow, 'id' | 'workflow_id' | 'run_id' | 'started_at'>>> {
  return db<DeploymentRow>(DEPLOYMENT_TABLE).where({ service_name: serviceName, status: 'DEPLOYING' }).select('id', 'workflow_id', 'run_id', 'started_at');
}

/**
 * Moves a deploy to its next stage and appends the event; a retry finds the event there and adds nothing. A
 * deploy that has finished (an attempt its run gave up on can still be running) is not moved back.
 */
export async function recordDeployStage(db: Knex, args: { deploymentId: string; stage: DeployStage; message: string; at: string }): Promise<void> {
  const event = { at: args.at, stage: args.stage, message: args.message };
  await db<DeploymentRow>(DEPLOYMENT_TABLE)
    .where({ id: args.deploymentId, status: 'DEPLOYING' })
    .whereRaw('not (events @> ?::jsonb)', [JSON.stringify([{ stage: args.stage }])])
    .update({ stage: args.stage, events: db.raw('events || ?::jsonb', [JSON.stringify([event])]) });
}

/** The deploy reached RUNNING. */
export async function recordDeployFinished(db: Knex, args: { deploymentId: string; at: string }): Promise<void> {
  const event = { at: args.at, stage: 'RUNNING', message: 'The new instances serve all requests.' };
  await db<DeploymentRow>(DEPLOYMENT_TABLE)
    .where({ id: args.deploymentId, status: 'DEPLOYING' })
    .update({ status: 'RUNNING', stage: 'RUNNING', finished_at: db.fn.now(), events: db.raw('events || ?::jsonb', [JSON.stringify([event])]) });
}

/**
 * The one rule of "a deploy, scale or undeploy is in progress": the service is being deployed or undeployed,
 * or one of its deployments is still DEPLOYING.
 */
export async function deployInProgress(db: Knex, service: { name: string; status?: ServiceStatus }): Promise<boolean> {
  if (service.status === 'DEPLOYING' || service.status === 'UNDEPLOYING') return true;
  return Boolean(await db<DeploymentRow>(DEPLOYMENT_TABLE).where({ service_name: service.name, status: 'DEPLOYING' }).first('id'));
}

/** The run that carries out a deploy, for its status and for telling a dead run from a live one. */
export async function recordDeploymentRun(db: Knex, args: { deploymentId: string; workflowId: string; runId: string }): Promise<void> {
  await db<DeploymentRow>(DEPLOYMENT_TABLE).where({ id: args.deploymentId }).update({ workflow_id: args.workflowId, run_id: args.runId });
}
