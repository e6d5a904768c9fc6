import { limitsForDeployment } from '../start-instance';
import { log } from '@temporalio/activity';
import { pollUntil } from '../../poll-until';
import Docker from 'dockerode';
import { DeploymentRow, findDeployment } from '../../../data/deploy/registry';
import { DeployDeps } from '../deps';
import { isGone } from '../docker-errors';
import { ensureNetworkOf } from '../service-network';
import { imageCommand, imageInRegistry } from './registry-image';
import { swarmServiceSpec } from './service-spec';
import { tasksOf } from './tasks';
import { finalFailure } from '../../failures';
import { ServiceRow } from '../../../data/deploy/registry';

// The swarm service of a deployed service: found, specified, scaled and removed, and its deployment's row.

export const POLL_MS = 500;
/**
 * A task's health check gives up on it once the health timeout (its start period, counted from the task's
 * start, which comes after the run's deadline was fixed) and three failed checks have passed; the swarm then
 * notices and rolls back. The wait gives the swarm that long past the run's deadline, so that it is the
 * swarm's own verdict (and its rollback) that fails an update. 10 s is too short on a loaded 2-core machine:
 * the run's deadline comes first, and the failure names it instead. 30 s fits in the health-check
 * activity's 60 s beyond the deadline.
 */
export const SWARM_VERDICT_MS = 30000;
export const LOG_LINES_KEPT = 30;

export interface SwarmService {
  ID: string;
  Version: { Index: number };
  Spec: Docker.CreateServiceOptions & { Labels?: Record<string, string>; Mode?: { Replicated?: { Replicas?: number } } };
  PreviousSpec?: unknown;
  UpdateStatus?: { State?: string; Message?: string };
}

export async function findSwarmService(docker: Docker, name: string): Promise<SwarmService | null> {
  try {
    return (await docker.getService(name).inspect()) as SwarmService;
  } catch (error) {
    if (isGone(error)) return null;
    throw error;
  }
}

/**
 * The swarm service that runs a deployment: the service's own, or (`canary`) its canary rollout's beside it.
 * Pushes the image to the swarm's registry first, so every node runs the same bytes.
 */
export async function serviceSpecFor(
  deps: DeployDeps,
  args: { deployment: DeploymentRow; service: ServiceRow; canary: boolean },
): Promise<Docker.CreateServiceOptions> {
  const { docker, config } = deps;
  const { deployment, service } = args;
  const image = await imageInRegistry(docker, { registry: config.deploy.registry!, image: deployment.image });
  const command = await imageCommand(docker, deployment.image);
  const network = await ensureNetworkOf(deps, deployment.service_name, 'overlay');
  const limits = await limitsForDeployment(deps, deployment);
  return swarmServiceSpec({
    serviceName: deployment.service_name,
    scope: config.deploy.scope,
    deploymentId: deployment.id,
    image,
    settings: deployment.settings,
    network,
    replicas: service.desired_instances,
    memoryMb: limits.memoryMb,
    pidsLimit: limits.pids,
    cpus: limits.cpus,
    log: { maxSize: config.deploy.logMaxSize, maxFiles: config.deploy.logMaxFiles },
    healthTimeoutSeconds: config.deploy.healthTimeoutSeconds,
    command,
    drainSeconds: config.deploy.drainSeconds,
    canary: args.canary,
  });
}

/** Removes a swarm service, and waits until the swarm has removed its tasks' containers on this node. */
export async function removeSwarmService(docker: Docker, swarmService: string): Promise<void> {
  const existing = await findSwarmService(docker, swarmService);
  if (existing)
    await docker
      .getService(existing.ID)
      .remove()
      .catch((error) => (isGone(error) ? undefined : Promise.reject(error)));
  await untilExtraTasksStopped(docker, swarmService, 0);
}

/** A canary rollout's deployment, while it is not yet the service's current one. */
export const isCanary = (deployment: DeploymentRow, service: ServiceRow | undefined) =>
  deployment.rollout !== null && service?.current_deployment_id !== deployment.id;

export async function requireDeployment(deps: DeployDeps, deploymentId: string): Promise<DeploymentRow> {
  const deployment = await findDeployment(deps.db, deploymentId);
  if (!deployment) throw finalFailure('NOT_FOUND', `No deployment ${deploymentId}.`);
  return deployment;
}

/** Sets the swarm service's replica count (a scale); the swarm starts or stops tasks to match. */
export async function setReplicas(docker: Docker, swarmService: string, replicas: number): Promise<void> {
  const service = await findSwarmService(docker, swarmService);
  if (!service || service.Spec.Mode?.Replicated?.Replicas === replicas) return;
  const spec = { ...service.Spec, Mode: { Replicated: { Replicas: replicas } } };
  await docker.getService(service.ID).update({ ...spec, version: service.Version.Index });
}

/** How long a scale down may take for the swarm's tasks to stop (their grace period, plus a margin). */
export const STOPPED_WITHIN_MS = 30000;

/**
 * Waits until no more tasks run than the swarm service wants, and the ones a scale down removes are gone
 * with their containers: what the docker driver's removal leaves, nothing.
 */
export async function untilExtraTasksStopped(docker: Docker, swarmService: string, replicas: number): Promise<void> {
  const deadline = Date.now() + STOPPED_WITHIN_MS;
  await pollUntil(POLL_MS, async () => {
    const tasks = await tasksOf(docker, swarmService);
    const running = tasks.filter((task) => task.Status.State === 'running');
    // The swarm forgets a removed task before this node has removed its container.
    const containers = await docker.listContainers({ all: true, filters: { label: [`com.docker.swarm.service.name=${swarmService}`] } });
    const orphaned = containers.filter((container) => !tasks.some((task) => task.ID === container.Labels['com.docker.swarm.task.id']));
    if (running.length <= replicas && !tasks.some((task) => task.DesiredState === 'remove') && orphaned.length === 0) return true;
    if (Date.now() > deadline) {
      log.warn(`${running.length} tasks of ${swarmService} still run after ${STOPPED_WITHIN_MS / 1000} s, where ${replicas} are wanted`);
      return true;
    }
    return undefined;
  });
}
