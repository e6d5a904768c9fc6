import crypto from 'node:crypto';
import { Static } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { conflict, unavailable } from '../../../lib/errors';
import { isUniqueViolation } from '../../../data/db-errors';
import { discardUploadedJar, keepUploadedJar } from '../../../data/deploy/jar-uploads';
import { DEPLOYMENT_TABLE, DeploySettings, SERVICE_TABLE, ServiceRow } from '../../../data/deploy/registry';
import { runStatusOf, startWorkflow } from '../../../temporal-config/client';
import { TaskQueues } from '../../../domain/task-queues';
import { RESERVED_SLUGS, slugOf } from '../../../domain/deploy';
import { DEPLOY_SERVICE_WORKFLOW, DeployServiceWorkflow, deployWorkflowId } from '../../../workflows/deploy/definitions';
import { SearchAttributeKeys } from '../../../domain/search-attributes';
import { DeployAcceptedSchema } from './schemas';
import { settleDeadDeploys } from '../../../data/deploy/dead-deploys';

export interface DeployRequest {
  serviceName: string;
  kind: 'JAR' | 'IMAGE';
  /** The image to run; null for a JAR deploy, whose image is built and named after the deploy. */
  image: string | null;
  /** The uploaded JAR (a temporary file) for a JAR deploy. */
  jarFile: string | null;
  settings: DeploySettings;
  redeploy: boolean;
  rollbackOf: string | null;
  requestedBy: string;
  warnings: string[];
}

const inProgress = (name: string) => conflict('DEPLOYMENT_IN_PROGRESS', `A deploy, scale or undeploy of ${name} is in progress.`);

/**
 * Registers a deploy and starts its workflow: every check of the contract first, then the registry rows
 * and the JAR in one transaction, then the workflow under `deploy:{name}` after the commit. A workflow that
 * cannot start takes its rows back.
 */
export async function startDeploy(deps: AppDeps, request: DeployRequest): Promise<Static<typeof DeployAcceptedSchema>> {
  const { db, config, docker, temporal } = deps;
  const name = request.serviceName;
  const slug = slugOf(name);
  if (RESERVED_SLUGS.includes(slug)) throw conflict('SLUG_RESERVED', `The slug ${slug} belongs to the platform.`);
  if (!(await docker.ping())) throw unavailable('DOCKER_UNAVAILABLE', 'The Docker engine does not answer.');

  await settleDeadDeploys(db, { serviceName: name, runStatusOf: runStatusOf(temporal) });

  const deploymentId = crypto.randomUUID();
  let firstDeploy = false;
  let image = request.image;
  try {
    await db.transaction(async (trx) => {
      const existing: ServiceRow | undefined = await trx(SERVICE_TABLE).where({ name }).forUpdate().first();
      if (existing && !existing.dynamic) throw conflict('SERVICE_NOT_DYNAMIC', `${name} is a core service, managed through docker compose.`);
      if (existing && !request.redeploy) throw conflict('SERVICE_EXISTS', `A service named ${name} is already registered; send redeploy=true to replace it.`);
      if (existing?.status === 'UNDEPLOYING') throw inProgress(name);
      if (!existing && (await trx(SERVICE_TABLE).where({ slug }).first('name'))) throw conflict('SLUG_TAKEN', `Another service already has the slug ${slug}.`);
      if (await trx(DEPLOYMENT_TABLE).where({ service_name: name, status: 'DEPLOYING' }).first('id')) throw inProgress(name);
      const { seq } = (await trx(DEPLOYMENT_TABLE).where({ service_name: name }).max({ seq: 'seq' }).first()) as { seq: number | null };
      const nextSeq = (seq ?? 0) + 1;
      image ??= `${config.deployScope}/${name}:${nextSeq}`;
      firstDeploy = !existing;
      if (firstDeploy) {
        await trx(SERVICE_TABLE).insert({
          name,
          slug,
          kind: request.kind,
          dynamic: true,
          group: request.settings.group,
          image,
          port: request.settings.port,
          host_port: request.settings.hostPort,
          env: JSON.stringify(request.settings.env),
          description: request.settings.description,
          desired_instances: 1,
          status: 'DEPLOYING',
          health_path: request.settings.healthPath,
        });
      }
      await trx(DEPLOYMENT_TABLE).insert({
        id: deploymentId,
        service_name: name,
        seq: nextSeq,
        kind: request.kind,
        image,
        build_from_jar: request.jarFile !== null,
        settings: JSON.stringify(request.settings),
        redeploy: !firstDeploy,
        rollback_of: request.rollbackOf,
        status: 'DEPLOYING',
        stage: 'VALIDATED',
        events: JSON.stringify([{ at: new Date().toISOString(), stage: 'VALIDATED', message: `Accepted: ${request.kind === 'JAR' ? 'JAR' : 'image'} deploy of ${name}.` }]),
        requested_by: request.requestedBy,
      });
      if (request.jarFile) await keepUploadedJar({ dataDir: config.dataDir, deploymentId, from: request.jarFile });
    });
  } catch (error) {
    await discardUploadedJar({ dataDir: config.dataDir, deploymentId });
    if (isUniqueViolation(error, 'service_name_key')) throw conflict('SERVICE_EXISTS', `A service named ${name} is already registered.`);
    if (isUniqueViolation(error, 'service_slug_key')) throw conflict('SLUG_TAKEN', `Another service already has the slug ${slug}.`);
    if (isUniqueViolation(error)) throw inProgress(name);
    throw error;
  }

  let started;
  try {
    started = await startWorkflow<DeployServiceWorkflow>(temporal, DEPLOY_SERVICE_WORKFLOW, {
      workflowId: deployWorkflowId(name),
      taskQueue: TaskQueues.deployments,
      args: [{ deploymentId, serviceName: name, healthTimeoutSeconds: config.deployHealthTimeoutSeconds, drainSeconds: config.deployDrainSeconds }],
      typedSearchAttributes: [{ key: SearchAttributeKeys.ServiceName, value: name }],
      alreadyRunningCode: 'DEPLOYMENT_IN_PROGRESS',
    });
  } catch (error) {
    await db.transaction(async (trx) => {
      await trx(DEPLOYMENT_TABLE).where({ id: deploymentId }).delete();
      if (firstDeploy) await trx(SERVICE_TABLE).where({ name, status: 'DEPLOYING' }).delete();
    });
    await discardUploadedJar({ dataDir: config.dataDir, deploymentId });
    throw error;
  }
  await db(DEPLOYMENT_TABLE).where({ id: deploymentId }).update({ workflow_id: started.workflowId, run_id: started.runId });
  return {
    deploymentId,
    serviceName: name,
    slug,
    status: 'DEPLOYING',
    statusUrl: `/api/infra/deployments/${deploymentId}`,
    ...started,
    ...(request.warnings.length > 0 ? { warnings: request.warnings } : {}),
  };
}
