import Docker from 'dockerode';
import { call } from '../support/http';
import { waitUntil } from '../support/wait';
import { TemporalHandle } from '../../temporal-config/client';
import { platformWithApi, RunningWorker } from '../support/platform';
import { deployNamedJar } from './jars';

/** Polls GET /api/infra/deployments/{id} until the deploy has ended; answers its last state. */
export async function deploymentOutcome(apiUrl: string, token: string, deploymentId: string, timeoutMs = 120000): Promise<any> {
  return waitUntil(
    `deployment ${deploymentId} to end`,
    async () => {
      const answer = await call(apiUrl, 'GET', `/api/infra/deployments/${deploymentId}`, { token });
      return answer.body.status !== 'DEPLOYING' ? answer.body : null;
    },
    timeoutMs,
  );
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

/**
 * One answer of `steadyTraffic`: for a failed one, also when it came and what the edge said (its problem's
 * detail and request id). A request that got no answer at all has status 0 and the reason as its detail.
 */
export interface TrafficAnswer {
  status: number;
  version: string | null;
  instance: string | null;
  at?: string;
  detail?: string;
  requestId?: string | null;
}

/**
 * Requests through the gateway to `/api/{slug}/ping`, two at a time, until stopped; every answer's status,
 * version and instance is kept. A failed answer keeps its time, the edge's words and its request id too, so
 * that a test that finds one can say when it came against the deploy's own events.
 */
export function steadyTraffic(args: { apiUrl: string; token: string; slug: string }) {
  const answers: TrafficAnswer[] = [];
  let running = true;
  const loop = async () => {
    while (running) {
      const answer = await call(args.apiUrl, 'GET', `/api/${args.slug}/ping`, { token: args.token }).catch(
        // No answer at all (a refused or closed connection) is a failed request too, kept with its reason.
        (error: Error) => ({
          status: 0,
          body: { detail: String((error.cause as Error | undefined)?.message ?? error.message) },
          text: '',
          headers: new Headers(),
        }),
      );
      const kept: TrafficAnswer = { status: answer.status, version: answer.body?.version ?? null, instance: answer.body?.instance ?? null };
      if (answer.status !== 200) {
        Object.assign(kept, {
          at: new Date().toISOString(),
          detail: answer.body?.detail ?? answer.text.slice(0, 200),
          requestId: answer.headers.get('x-request-id'),
        });
      }
      answers.push(kept);
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
 * No failed answer. Should one come, the failure shows each with its time beside `context()` (the deploys'
 * events, each with theirs) and the edge's access-log lines of those requests (Envoy's response flags say
 * why it answered itself): a rare race then says where in the deploy it fell.
 */
export async function expectNoFailedAnswers(
  answers: TrafficAnswer[],
  context: { platform: { edge(): { output(): string } | null }; deploys: () => Promise<unknown> },
): Promise<void> {
  const failed = answers.filter((answer) => answer.status !== 200);
  if (failed.length === 0) return;
  const ids = new Set(failed.map((answer) => answer.requestId));
  const edgeLines = (context.platform.edge()?.output() ?? '').split('\n').filter((line) => [...ids].some((id) => id && line.includes(id)));
  expect({ failed, deploys: await context.deploys(), edgeLines }).toEqual({ failed: [] });
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
    scope: () => thisFile.platform.config.deploy.scope,
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
