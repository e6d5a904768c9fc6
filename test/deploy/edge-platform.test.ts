import { attachPlatform, RunningApiProcess, TestPlatform } from '../support/platform';
import { call } from '../support/http';
import { waitUntil } from '../support/wait';
import { deploymentOutcome } from './harness';
import { buildJar, postJar } from './jars';

/**
 * The edge in front of the real platform, run as production runs it: the API is its own process behind
 * Envoy and writes Envoy's configuration from the registry; a deployed container is reached through
 * Envoy, which verifies the caller's token itself.
 */
let platform: TestPlatform;
let api: RunningApiProcess;
let edgeUrl: string;
let admin: string;
let viewer: string;

beforeAll(async () => {
  platform = await attachPlatform();
  api = await platform.startApiProcess();
  edgeUrl = api.url;
  await platform.startWorker(['deployments']);
  admin = await platform.token({ sub: 'ada', roles: ['ADMIN'] });
  viewer = await platform.token({ sub: 'vic', name: 'Vic', roles: ['VIEWER'], sites: ['s1'] });
});

afterAll(async () => {
  await platform?.close();
});

test("a deployed JAR answers through Envoy with the caller's identity, never the token; the platform's own routes pass through to the API", async () => {
  const jar = await buildJar({ mainClass: 'HelloServer' });
  const accepted = await postJar({ apiUrl: edgeUrl, token: admin, jar, fields: { serviceName: 'edge-service', port: '8080' } });
  expect(accepted.status).toBe(202);
  expect(await deploymentOutcome(edgeUrl, admin, accepted.body.deploymentId)).toEqual(expect.objectContaining({ status: 'RUNNING' }));

  // The first instance comes with its cluster: never a second of "no healthy upstream" after RUNNING.
  const refusals = new Set<string>();
  const answer = await waitUntil(
    'the service through the edge',
    async () => {
      const through = await call(edgeUrl, 'GET', '/api/edge/orders?x=1', { token: viewer, headers: { 'x-user-id': 'mallory' } });
      if (through.status !== 200) refusals.add(`${through.status} ${through.body.detail}`);
      return through.status === 200 ? through : null;
    },
    10000,
  );
  expect([...refusals].filter((refusal) => !refusal.includes('being connected at the edge'))).toEqual([]);
  expect(answer.body).toEqual(expect.objectContaining({ path: '/orders?x=1', userId: 'vic', userRoles: 'VIEWER', authorization: null }));
  expect((await call(edgeUrl, 'GET', '/api/edge/x')).status).toBe(401);
  expect((await call(edgeUrl, 'GET', '/api/infra/services/edge-service', { token: admin })).body).toEqual(
    expect.objectContaining({ name: 'edge-service', slug: 'edge' }),
  );
});

test("scale from 1 to 3: the new instances are in Envoy's rotation within 2 s of the scale run, with no Envoy restart", async () => {
  const scaled = await call(edgeUrl, 'POST', '/api/infra/services/edge-service/scale', { token: admin, body: { instances: 3 } });
  expect(scaled.status).toBe(202);
  await platform.temporal.client.workflow.getHandle(scaled.body.workflowId, scaled.body.runId).result();
  const registered = Date.now();
  await waitUntil(
    'three instances behind the edge',
    async () => {
      const seen = new Set<string>();
      for (let i = 0; i < 9; i++) seen.add((await call(edgeUrl, 'GET', '/api/edge/who', { token: viewer })).body.instance);
      return seen.size === 3 ? true : null;
    },
    10000,
  );
  expect(Date.now() - registered).toBeLessThanOrEqual(2000);
});

test('the API process killed and started again under steady traffic to a deployed service: that traffic sees no error', async () => {
  const statuses: number[] = [];
  let running = true;
  const loop = async () => {
    while (running) statuses.push((await call(edgeUrl, 'GET', '/api/edge/who', { token: viewer })).status);
  };
  const loops = [loop(), loop()];
  await waitUntil('traffic', async () => statuses.length > 20);
  await api.kill();
  // The API is gone: its own routes fail at the edge, the deployed service does not.
  const whileDown = await call(edgeUrl, 'GET', '/api/infra/services/edge-service', { token: admin });
  expect(whileDown.status).toBe(503);
  const duringOutage = statuses.length;
  await waitUntil('traffic while the API is down', async () => statuses.length > duringOutage + 50);
  api = await platform.startApiProcess();
  expect((await call(edgeUrl, 'GET', '/api/infra/services/edge-service', { token: admin })).status).toBe(200);
  const afterRestart = statuses.length;
  await waitUntil('traffic after the restart', async () => statuses.length > afterRestart + 50);
  running = false;
  await Promise.all(loops);
  expect(statuses.filter((status) => status !== 200)).toEqual([]);
});
