import { Knex } from 'knex';
import { conflict, refusedWith } from '../../lib/errors';
import { isUniqueViolation } from '../db-errors';
import { jsonb } from '../db';
import { RolloutPlan, rolloutWithoutBaseRefusal, ServiceLimits } from '../../domain/deploy';
import { DEPLOYMENT_TABLE, DeploymentRow, DeploySettings, deployInProgress, SERVICE_TABLE, ServiceRow } from './registry';

// A deploy request: registered with its service's row before its run starts, or taken back.

const inProgress = (name: string) => conflict('DEPLOYMENT_IN_PROGRESS', `A deploy, scale or undeploy of ${name} is in progress.`);

export interface RegisteredDeploy {
  firstDeploy: boolean;
  image: string;
}

/** A deploy request as the API registers it. */
export interface DeployRequest {
  deploymentId: string;
  serviceName: string;
  slug: string;
  kind: 'JAR' | 'IMAGE';
  image: string | null;
  imagePrefix: string;
  buildFromJar: boolean;
  settings: DeploySettings;
  redeploy: boolean;
  rollbackOf: string | null;
  requestedBy: string;
  rollout?: RolloutPlan | null;
  /** Limits asked for with this deploy, any of them; the rest are the service's (or `defaultLimits`). */
  limits?: Partial<ServiceLimits>;
  defaultLimits?: ServiceLimits;
  /** Runs in the transaction once the service's row is there (its hostnames). */
  afterRegister?: (trx: Knex.Transaction, serviceId: string) => Promise<void>;
  beforeCommit?: () => Promise<void>;
}

/** The row of a service deployed for the first time, DEPLOYING; answers its id. */
async function insertNewService(trx: Knex.Transaction, args: DeployRequest, image: string): Promise<string> {
  const [{ id }] = await trx<ServiceRow>(SERVICE_TABLE).insert(
    {
      name: args.serviceName,
      slug: args.slug,
      kind: args.kind,
      dynamic: true,
      group: args.settings.group,
      image,
      port: args.settings.port,
      host_port: args.settings.hostPort,
      env: jsonb(trx, args.settings.env),
      description: args.settings.description,
      desired_instances: 1,
      status: 'DEPLOYING',
      health_path: args.settings.healthPath,
    },
    'id',
  );
  return id;
}

/**
 * Records a deploy request, in one transaction under the service's row lock: the service row for a first
 * deploy, the deployment row DEPLOYING with the next sequence number. Refuses a core service, an existing
 * one without `redeploy`, a slug taken, a deploy or undeploy in progress (409s). `beforeCommit` runs inside
 * the transaction (the uploaded JAR moves into place), so a refused request keeps nothing.
 */
export async function registerDeployRequest(db: Knex, args: DeployRequest): Promise<RegisteredDeploy> {
  const name = args.serviceName;
  try {
    return await db.transaction(async (trx) => {
      const existing: ServiceRow | undefined = await trx<ServiceRow>(SERVICE_TABLE).where({ name }).forUpdate().first();
      if (existing && !existing.dynamic) throw conflict('SERVICE_NOT_DYNAMIC', `${name} is a core service, managed through docker compose.`);
      if (existing && !args.redeploy) throw conflict('SERVICE_EXISTS', `A service named ${name} is already registered; send redeploy=true to replace it.`);
      if (!existing && (await trx<ServiceRow>(SERVICE_TABLE).where({ slug: args.slug }).first('name')))
        throw conflict('SLUG_TAKEN', `Another service already has the slug ${args.slug}.`);
      if (await deployInProgress(trx, { name, status: existing?.status })) throw inProgress(name);
      const refusal = args.rollout ? rolloutWithoutBaseRefusal(name, Boolean(existing?.current_deployment_id)) : null;
      if (refusal) throw refusedWith(refusal);
      const { seq } = (await trx<DeploymentRow>(DEPLOYMENT_TABLE).where({ service_name: name }).max({ seq: 'seq' }).first()) as { seq: number | null };
      const nextSeq = (seq ?? 0) + 1;
      const image = args.image ?? `${args.imagePrefix}/${name}:${nextSeq}`;
      const firstDeploy = !existing;
      const asked = Object.fromEntries(Object.entries(args.limits ?? {}).filter(([, value]) => value !== undefined));
      const base = existing?.limits ?? args.defaultLimits;
      const settings: DeploySettings = Object.keys(asked).length > 0 && base ? { ...args.settings, limits: { ...base, ...asked } } : args.settings;
      let serviceId = existing?.id;
      if (firstDeploy) serviceId = await insertNewService(trx, args, image);
      await trx<DeploymentRow>(DEPLOYMENT_TABLE).insert({
        id: args.deploymentId,
        service_name: name,
        seq: nextSeq,
        kind: args.kind,
        image,
        build_from_jar: args.buildFromJar,
        settings: jsonb(trx, settings),
        redeploy: !firstDeploy,
        rollback_of: args.rollbackOf,
        status: 'DEPLOYING',
        stage: 'VALIDATED',
        events: jsonb(trx, [
          { at: new Date().toISOString(), stage: 'VALIDATED', message: `Accepted: ${args.kind === 'JAR' ? 'JAR' : 'image'} deploy of ${name}.` },
        ]),
        requested_by: args.requestedBy,
        rollout: args.rollout ? jsonb(trx, args.rollout) : null,
      });
      await args.afterRegister?.(trx, serviceId!);
      await args.beforeCommit?.();
      return { firstDeploy, image };
    });
  } catch (error) {
    if (isUniqueViolation(error, 'service_name_key')) throw conflict('SERVICE_EXISTS', `A service named ${name} is already registered.`);
    if (isUniqueViolation(error, 'service_slug_key')) throw conflict('SLUG_TAKEN', `Another service already has the slug ${args.slug}.`);
    if (isUniqueViolation(error)) throw inProgress(name);
    throw error;
  }
}

/** Takes back a deploy request whose workflow could not start. */
export async function dropDeployRequest(db: Knex, args: { deploymentId: string; serviceName: string; firstDeploy: boolean }): Promise<void> {
  await db.transaction(async (trx) => {
    await trx<DeploymentRow>(DEPLOYMENT_TABLE).where({ id: args.deploymentId }).delete();
    if (args.firstDeploy) await trx<ServiceRow>(SERVICE_TABLE).where({ name: args.serviceName, status: 'DEPLOYING' }).delete();
  });
}
