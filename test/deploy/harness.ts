import Docker from 'dockerode';
import { call } from '../support/http';
import { waitUntil } from '../support/wait';
import { TemporalHandle } from '../../temporal-config/client';
import { platformWithApi, RunningWorker } from '../support/platform';
import { deployNamedJar } from './jars';

/** Polls GET /api/infra/deployments/{id} until the deploy has ended; answers its last state. */
export async function deploymentOutcome(apiUrl: string, token: string, deploymentId: string): Promise<any> {
  return waitUntil(`deployment ${deploymentId} to end`, async () => {
    const answer = await call(apiUrl, 'GET', `/api/infra/deployments/${deploymentId}`, { token });
    return answer.body.status !== 'DEPLOYING' ? answer.body : null;
  });
}

/**
 * A deploy's workflow has closed: after RUNNING it still drains and stops the replaced instances and prunes
 * old images, and until then another deploy of the service is 409 DEPLOYMENT_IN_PROGRESS.
 */
export async function deployClosed(temporal: TemporalHandle, started: { workflowId: string; runId: string }): Promise<void> {
  await temporal.client.workflow.getHandle(started.workflowId, started.runId).result();
}

/**
 * The undo steps of a failed deploy that themselves failed, as its run ended with them: a clean undo (every
 * step done, nothing it created left to chance) answers none.
 */
export async function undoFailuresOf(temporal: TemporalHandle, workflowId: string): Promise<string[]> {
  try {
    await temporal.client.workflow.getHandle(workflowId).result();
  } catch (error: any) {
    const details = error?.cause?.details?.[0];
    return details?.undoFailures ?? [];
  }
  throw new Error(`the deploy ${workflowId} succeeded; a failed one was expected`);
}

export async function containersOf(docker: Docker, scope: string, serviceName: string, all = true) {
  return docker.listContainers({ all, filters: { label: [`opsflow.scope=${scope}`, `opsflow.service=${serviceName}`] } });
}

/**
 * The containers of a service that a deploy left: every one under the docker driver, which removes what it
 * stops; under the swarm driver the running ones, since a swarm keeps its stopped tasks' containers as
 * their history (`docker service ps`), up to its task-history limit.
 */
export async function leftContainersOf(docker: Docker, args: { scope: string; serviceName: string; driver: string }) {
  return containersOf(docker, args.scope, args.serviceName, args.driver !== 'swarm');
}

export async function imagesOf(docker: Docker, scope: string, serviceName: string) {
  return docker.listImages({ filters: { label: [`opsflow.scope=${scope}`, `opsflow.service=${serviceName}`] } });
}

/** The networks the platform made for a service (a bridge, or the swarm driver's overlay). */
export async function networksOf(docker: Docker, scope: string, serviceName: string) {
  return docker.listNetworks({ filters: { label: [`opsflow.scope=${scope}`, `opsflow.service=${serviceName}`] } });
}

/** Requests through the gateway to `/api/{slug}/ping`, two at a time, until stopped; every answer's status, version and instance is kept. */
export function steadyTraffic(args: { apiUrl: string; token: string; slug: string }) {
  const answers: Array<{ status: number; version: string | null; instance: string | null }> = [];
  let running = true;
  const loop = async () => {
    while (running) {
      const answer = await call(args.apiUrl, 'GET', `/api/${args.slug}/ping`, { token: args.token });
      answers.push({ status: answer.status, version: answer.body?.version ?? null, instance: answer.body?.instance ?? null });
    }
  };
  const loops = [loop(), loop()];
  return {
    answers,
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return answers;
    },
  };
}

/**
 * A deploy test file's platform: its own API (with `env`), a deployments worker, and the tokens of an ADMIN
 * (ada) and a VIEWER (vic), all ready once beforeAll has run. `deployJar` deploys a named JAR as the ADMIN.
 */
export function deployTestFile(env: NodeJS.ProcessEnv = {}) {
  const thisFile = platformWithApi({ env });
  const tokens = { admin: '', viewer: '' };
  let worker: RunningWorker | undefined;
  beforeAll(async () => {
    worker = await thisFile.platform.startWorker(['deployments']);
    tokens.admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
    tokens.viewer = await thisFile.platform.token({ sub: 'vic', roles: ['VIEWER'] });
  });
  return {
    thisFile,
    tokens,
    worker: () => worker!,
    scope: () => thisFile.platform.config.deployScope,
    deployJar: (name: string, mainClass = 'HelloServer', fields: Record<string, string> = {}) =>
      deployNamedJar({ apiUrl: thisFile.api.url, token: tokens.admin, name, mainClass, fields }),
    /** `POST /api/infra/deploy` (an image) as the ADMIN: the API's answer. */
    deployImage: (body: Record<string, unknown>) => call(thisFile.api.url, 'POST', '/api/infra/deploy', { token: tokens.admin, body }),
    /** Steady traffic (as the VIEWER) through the edge to the service at `slug`, flowing once this resolves. */
    trafficTo: async (slug: string) => {
      const traffic = steadyTraffic({ apiUrl: thisFile.api.url, token: tokens.viewer, slug });
      await waitUntil('traffic', async () => traffic.answers.length > 20);
      return traffic;
    },
    /** The deploy ended RUNNING (its health check passed and traffic switched). */
    expectRunning: async (accepted: { deploymentId: string }) =>
      expect(await deploymentOutcome(thisFile.api.url, tokens.admin, accepted.deploymentId)).toEqual(expect.objectContaining({ status: 'RUNNING' })),
  };
}
