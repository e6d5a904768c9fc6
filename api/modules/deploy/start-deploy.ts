import crypto from 'node:crypto';
import { Static } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { badRequest, conflict, ErrorCode, unavailable } from '../../../lib/errors';
import { discardUploadedJar, keepUploadedJar } from '../../../data/deploy/jar-uploads';
import { domainsOf, setDomainsOf } from '../../../data/deploy/domains';
import { certificateRunsFor } from './domain-routes';
import { DeploySettings, findService, recordDeploymentRun } from '../../../data/deploy/registry';
import { dropDeployRequest, RegisteredDeploy, registerDeployRequest } from '../../../data/deploy/deploy-requests';
import { startWorkflow } from '../../../temporal-config/client';
import { TaskQueues } from '../../../domain/task-queues';
import { RESERVED_SLUGS, RolloutPlan, rolloutProblem, ServiceLimits, slugOf } from '../../../domain/deploy';
import { DEPLOY_SERVICE_WORKFLOW, DeployServiceWorkflow, deployWorkflowId } from '../../../workflows/deploy/definitions';
import { SearchAttributeKeys } from '../../../domain/search-attributes';
import { DeployAcceptedSchema } from './schemas';
import { settleDeadDeploysAtEdge } from './dead-deploys';
import { DOCKER_UNAVAILABLE_DETAIL } from '../../../adapters/docker';
import { baseImageState } from '../../../adapters/deploy/jre-base-image';
import { fairShareOf } from '../../../domain/fairness';

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
  /** Limits asked for with this deploy, any of them (the rest stay as the service has them). */
  limits?: Partial<ServiceLimits>;
  /** A canary rollout (a redeploy only); no maxP99Ms: latency is not judged. */
  rollout?: (Omit<RolloutPlan, 'maxP99Ms'> & { maxP99Ms?: number | null }) | null;
  /** The service's hostnames from this deploy on, checked (api/modules/deploy/hostnames.ts); unset, they stay. */
  domains?: string[];
}

/**
 * Registers a deploy and starts its workflow: every check of the contract first, then the registry rows
 * and the JAR in one transaction, then the workflow under `deploy:{name}` after the commit. A workflow that
 * cannot start takes its rows back.
 */
/** What a deploy request can be refused with, whichever route brings it. */
export const START_DEPLOY_ERRORS: ErrorCode[] = [
  'SLUG_RESERVED',
  'DOCKER_UNAVAILABLE',
  'BASE_IMAGE_UNAVAILABLE',
  'SERVICE_EXISTS',
  'SLUG_TAKEN',
  'SERVICE_NOT_DYNAMIC',
  'DEPLOYMENT_IN_PROGRESS',
  'TEMPORAL_UNAVAILABLE',
  'DOMAIN_INVALID',
  'DOMAIN_TAKEN',
];

export async function startDeploy(deps: AppDeps, request: DeployRequest): Promise<Static<typeof DeployAcceptedSchema>> {
  const { db, config, docker, temporal } = deps;
  const name = request.serviceName;
  const slug = slugOf(name);
  if (RESERVED_SLUGS.includes(slug)) throw conflict('SLUG_RESERVED', `The slug ${slug} belongs to the platform.`);
  if (request.rollout) refuseRollout(config, request);
  if (!(await docker.ping())) throw unavailable('DOCKER_UNAVAILABLE', DOCKER_UNAVAILABLE_DETAIL);
  // A JAR deploy on a machine that builds its base image and cannot: refused now, naming the fix, rather
  // than failing later in the build.
  if (request.jarFile !== null && config.deploy.baseImageBuild === 'debian') {
    const base = await baseImageState(docker.docker, config.deploy.baseImage);
    if (base.state === 'unavailable') throw unavailable('BASE_IMAGE_UNAVAILABLE', base.reason);
  }

  await settleDeadDeploysAtEdge(deps, name);

  const deploymentId = crypto.randomUUID();
  let registered: RegisteredDeploy;
  try {
    registered = await registerDeployRequest(db, {
      deploymentId,
      serviceName: name,
      slug,
      kind: request.kind,
      image: request.image,
      imagePrefix: config.deploy.scope,
      buildFromJar: request.jarFile !== null,
      settings: request.settings,
      redeploy: request.redeploy,
      rollbackOf: request.rollbackOf,
      requestedBy: request.requestedBy,
      rollout: request.rollout ? { ...request.rollout, maxP99Ms: request.rollout.maxP99Ms ?? null } : null,
      limits: request.limits,
      defaultLimits: { memoryMb: config.deploy.memoryMb, cpus: config.deploy.cpus, pids: config.deploy.pidsLimit },
      // Its hostnames in the same transaction: one another service holds refuses the whole deploy.
      afterRegister: request.domains ? (trx, serviceId) => setDomainsOf(trx, serviceId, request.domains!).then(() => undefined) : undefined,
      // The JAR moves into place inside the transaction: a refused deploy keeps none.
      beforeCommit: request.jarFile ? () => keepUploadedJar({ dataDir: config.dataDir, deploymentId, from: request.jarFile! }) : undefined,
    });
  } catch (error) {
    await discardUploadedJar({ dataDir: config.dataDir, deploymentId });
    throw error;
  }

  let started;
  try {
    started = await startWorkflow<DeployServiceWorkflow>(temporal, DEPLOY_SERVICE_WORKFLOW, {
      workflowId: deployWorkflowId(name),
      taskQueue: TaskQueues.deployments,
      args: [{ deploymentId, serviceName: name, healthTimeoutSeconds: config.deploy.healthTimeoutSeconds, drainSeconds: config.deploy.drainSeconds }],
      priority: fairShareOf('deploy'),
      typedSearchAttributes: [{ key: SearchAttributeKeys.ServiceName, value: name }],
      alreadyRunningCode: 'DEPLOYMENT_IN_PROGRESS',
    });
  } catch (error) {
    await dropDeployRequest(db, { deploymentId, serviceName: name, firstDeploy: registered.firstDeploy });
    await discardUploadedJar({ dataDir: config.dataDir, deploymentId });
    throw error;
  }
  await recordDeploymentRun(db, { deploymentId, workflowId: started.workflowId, runId: started.runId });
  // The service serves on its path while its certificates are pending: the deploy never waits for them.
  const service = request.domains ? await findService(db, name) : null;
  if (service) await certificateRunsFor(deps, await domainsOf(db, service.id));
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

/**
 * Refuses a rollout the platform cannot run (400 VALIDATION_FAILED on `body.rollout`): steps that do not
 * ascend to 100, a host-port service (its old instances stop before new ones can bind), and an edge whose
 * statistics cannot be read (no EDGE_ADMIN_URL). Under either driver the canary runs beside the current version:
 * containers of its own, or (swarm) a swarm service of its own.
 */
function refuseRollout(config: Pick<AppDeps['config'], 'edge'>, request: DeployRequest): void {
  const refuse = (message: string) => {
    throw badRequest('VALIDATION_FAILED', 'The rollout cannot be run.', [{ path: 'body.rollout', message }]);
  };
  const problem = rolloutProblem(request.rollout);
  if (problem) refuse(problem);
  if (!request.redeploy) refuse('a rollout is a redeploy of a running service: send redeploy=true');
  if (request.settings.hostPort !== null) refuse('a service on a host port cannot run two versions side by side');
  if (!config.edge.adminUrl) refuse("a rollout is judged on the edge's statistics: EDGE_ADMIN_URL must be set");
}
