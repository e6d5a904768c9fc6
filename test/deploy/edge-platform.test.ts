import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { attachPlatform, RunningApi, TestPlatform } from '../support/platform';
import { call } from '../support/http';
import { waitUntil } from '../support/wait';
import { freePort } from '../support/slots';
import { deploymentOutcome } from './harness';
import { buildJar, postJar } from './jars';
import { startEdgeControlPlane } from '../../api/modules/deploy/edge-control-plane';
import { RunningEdge, startEdge } from '../../scripts/platform/edge';

/**
 * The edge in front of the real platform: the API writes Envoy's configuration from the registry, and a
 * deployed container is reached through Envoy, which verifies the caller's token itself.
 */
let platform: TestPlatform;
let api: RunningApi;
let edge: RunningEdge;
let controlPlane: ReturnType<typeof startEdgeControlPlane>;
let dir: string;
let edgeUrl: string;
let admin: string;
let viewer: string;

beforeAll(async () => {
  platform = await attachPlatform();
  api = await platform.startApi();
  await platform.startWorker(['deployments']);
  admin = await platform.token({ sub: 'ada', roles: ['ADMIN'] });
  viewer = await platform.token({ sub: 'vic', name: 'Vic', roles: ['VIEWER'], sites: ['s1'] });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-edge-platform-'));
  const listen = { host: '127.0.0.1', port: await freePort() };
  controlPlane = startEdgeControlPlane({
    db: platform.db,
    config: platform.config,
    logger: platform.deps.logger,
    edge: { dir, listen, api: { host: '127.0.0.1', port: Number(new URL(api.url).port) }, connectTimeoutMs: 1000, idleTimeoutMs: 60000 },
  });
  await controlPlane.ready;
  edge = await startEdge({ dir, adminPort: await freePort() });
  edgeUrl = `http://127.0.0.1:${listen.port}`;
});

afterAll(async () => {
  await controlPlane?.close();
  await edge?.stop();
  await platform?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('a deployed JAR answers through Envoy with the caller\'s identity, never the token; the platform\'s own routes pass through to the API', async () => {
  const jar = await buildJar({ mainClass: 'HelloServer' });
  const accepted = await postJar({ apiUrl: edgeUrl, token: admin, jar, fields: { serviceName: 'edge-service', port: '8080' } });
  expect(accepted.status).toBe(202);
  expect(await deploymentOutcome(edgeUrl, admin, accepted.body.deploymentId)).toEqual(expect.objectContaining({ status: 'RUNNING' }));

  // The first instance comes with its cluster: never a second of "no healthy upstream" after RUNNING.
  const refusals = new Set<string>();
  const answer = await waitUntil('the service through the edge', async () => {
    const through = await call(edgeUrl, 'GET', '/api/edge/orders?x=1', { token: viewer, headers: { 'x-user-id': 'mallory' } });
    if (through.status !== 200) refusals.add(`${through.status} ${through.body.detail}`);
    return through.status === 200 ? through : null;
  }, 10000);
  expect([...refusals].filter((refusal) => !refusal.includes('being connected at the edge'))).toEqual([]);
  expect(answer.body).toEqual(expect.objectContaining({ path: '/orders?x=1', userId: 'vic', userRoles: 'VIEWER', authorization: null }));
  expect((await call(edgeUrl, 'GET', '/api/edge/x')).status).toBe(401);
  expect((await call(edgeUrl, 'GET', '/api/infra/services/edge-service', { token: admin })).body).toEqual(expect.objectContaining({ name: 'edge-service', slug: 'edge' }));
});

test('scale from 1 to 3: the new instances are in Envoy\'s rotation within 2 s of the scale run, with no Envoy restart', async () => {
  const scaled = await call(edgeUrl, 'POST', '/api/infra/services/edge-service/scale', { token: admin, body: { instances: 3 } });
  expect(scaled.status).toBe(202);
  await platform.temporal.client.workflow.getHandle(scaled.body.workflowId, scaled.body.runId).result();
  const registered = Date.now();
  await waitUntil('three instances behind the edge', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 9; i++) seen.add((await call(edgeUrl, 'GET', '/api/edge/who', { token: viewer })).body.instance);
    return seen.size === 3 ? true : null;
  }, 10000);
  expect(Date.now() - registered).toBeLessThanOrEqual(2000);
});
