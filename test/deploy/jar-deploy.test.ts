import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import http from 'node:http';
import { platformWithApi, RunningWorker } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { recordHistory } from '../support/histories';
import { capturedLogger, decodedPayloads, workflowShow } from '../support/observed';
import { containersOf, deploymentOutcome, imagesOf } from './harness';
import { waitUntil } from '../support/wait';
import { edgeRequestsInFlight, edgeRoutesToService } from '../../edge/admin';
import { buildJar, postJar } from './jars';

const execFileAsync = promisify(execFile);

const apiLog = capturedLogger();
const thisFile = platformWithApi({ apiDeps: () => ({ logger: apiLog.logger }) });
let admin: string;
let viewer: string;
let worker: RunningWorker;
const DB_PASSWORD = 'hunter2-very-secret';
const URL_PASSWORD = 'pg-url-pass-4321';

beforeAll(async () => {
  worker = await thisFile.platform.startWorker(['deployments']);
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  viewer = await thisFile.platform.token({ sub: 'vic', name: 'Vic', roles: ['VIEWER'], sites: ['s1'] });
});

const scope = () => thisFile.platform.config.deploy.scope;

async function deployHelloFromProperties() {
  const jar = await buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': 'spring.application.name=hello-service\nserver.port=8081\n' } });
  const answer = await postJar({
    apiUrl: thisFile.api.url,
    token: admin,
    jar,
    fields: { serviceName: '', port: '', ENV_GREETING: 'salaam', ENV_DB_PASSWORD: DB_PASSWORD, ENV_DATABASE_URL: `postgres://app:${URL_PASSWORD}@db:5432/app` },
  });
  expect(answer.status).toBe(202);
  return answer.body;
}

describe('a JAR with application.properties, deployed with blank name and port', () => {
  let accepted: any;
  let outcome: any;

  beforeAll(async () => {
    accepted = await deployHelloFromProperties();
    outcome = await deploymentOutcome(thisFile.api.url, admin, accepted.deploymentId);
    await recordHistory(thisFile.platform.temporal, { workflowId: accepted.workflowId, runId: accepted.runId, name: 'deploy-jar-running' });
  });

  test('POST /api/infra/deploy/jar -> 202 with the name and slug from the JAR and the workflow started', () => {
    expect(accepted).toEqual({
      deploymentId: expect.any(String),
      serviceName: 'hello-service',
      slug: 'hello',
      status: 'DEPLOYING',
      statusUrl: `/api/infra/deployments/${accepted.deploymentId}`,
      workflowId: 'deploy:hello-service',
      runId: expect.any(String),
      uiUrl: expect.stringContaining('/workflows/deploy%3Ahello-service/'),
    });
  });

  test('GET /api/infra/deployments/{id}: the stages run in order and end in RUNNING', () => {
    expect(outcome).toEqual(
      expect.objectContaining({ deploymentId: accepted.deploymentId, serviceName: 'hello-service', stage: 'RUNNING', status: 'RUNNING' }),
    );
    expect(outcome.events.map((event: any) => event.stage)).toEqual(['VALIDATED', 'BUILDING_IMAGE', 'STARTING', 'HEALTH_CHECK', 'REGISTERING', 'RUNNING']);
    expect(outcome.error).toBeUndefined();
  });

  test('the registry has it: group platform, port from the JAR, one running instance; secret-looking env values are masked', async () => {
    const service = await call(thisFile.api.url, 'GET', '/api/infra/services/hello-service', { token: admin });
    expect(service.status).toBe(200);
    expect(service.body).toEqual(
      expect.objectContaining({
        name: 'hello-service',
        slug: 'hello',
        kind: 'JAR',
        dynamic: true,
        group: 'platform',
        port: 8081,
        status: 'RUNNING',
        desiredInstances: 1,
        runningInstances: 1,
        image: `${scope()}/hello-service:1`,
      }),
    );
    expect(service.body.env).toEqual({ GREETING: 'salaam', DB_PASSWORD: '****', DATABASE_URL: 'postgres://app:****@db:5432/app' });
    expect(service.text).not.toContain('hunter2-very-secret');
    expect(service.body.instances).toEqual([expect.objectContaining({ state: 'HEALTHY', address: expect.stringMatching(/:8081$/) })]);

    const list = await call(thisFile.api.url, 'GET', '/api/infra/services', { token: admin });
    const byName = Object.fromEntries(list.body.items.map((item: any) => [item.name, item]));
    expect(byName['hello-service']).toEqual(expect.objectContaining({ kind: 'JAR', dynamic: true, runningInstances: 1 }));
    expect(byName.settings).toEqual(expect.objectContaining({ kind: 'CORE', dynamic: false, slug: 'settings' }));
    expect(list.text).not.toContain('hunter2-very-secret');
  });

  test('GET /api/hello/x through the gateway reaches the container with the caller identity and the ENV_ value, not the JWT', async () => {
    const answer = await call(thisFile.api.url, 'GET', '/api/hello/x?y=1', { token: viewer, headers: { 'X-User-Id': 'forged' } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(
      expect.objectContaining({ path: '/x?y=1', method: 'GET', userId: 'vic', userRoles: 'VIEWER', greeting: 'salaam', authorization: null }),
    );
  });

  test("the service sees where the request came from as the gateway states it: a client's Forwarded, X-Forwarded-For and X-Real-IP go, and so do the headers it names in Connection", async () => {
    const seen = await new Promise<Record<string, unknown>>((resolve, reject) => {
      // node:http, since fetch refuses to send a Connection header.
      const request = http.request(`${thisFile.api.url}/api/hello/who`, {
        headers: {
          authorization: `Bearer ${viewer}`,
          forwarded: 'for=6.6.6.6;proto=https',
          'x-forwarded-for': '6.6.6.6',
          'x-real-ip': '6.6.6.6',
          connection: 'keep-alive, X-Hop-Secret',
          'x-hop-secret': 'for-the-gateway-only',
        },
      });
      request.on('response', (answer) => {
        let text = '';
        answer.on('data', (chunk) => (text += chunk));
        answer.on('end', () => resolve(JSON.parse(text) as Record<string, unknown>));
      });
      request.on('error', reject);
      request.end();
    });
    expect(seen).toEqual(expect.objectContaining({ userId: 'vic', forwardedFor: '127.0.0.1', realIp: '127.0.0.1', hopByHop: null }));
    expect(seen.forwarded).toMatch(/^for=127\.0\.0\.1;proto=http;host="127\.0\.0\.1:\d+"$/);
  });

  test("from inside another deployed container, a direct request to the service's port fails; its own network reaches it", async () => {
    const neighbour = await postJar({
      apiUrl: thisFile.api.url,
      token: admin,
      jar: await buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': 'spring.application.name=neighbour-service\nserver.port=8082\n' } }),
    });
    expect(neighbour.status).toBe(202);
    expect((await deploymentOutcome(thisFile.api.url, admin, neighbour.body.deploymentId)).status).toBe('RUNNING');
    const [hello] = await containersOf(thisFile.platform.docker.docker, scope(), 'hello-service', false);
    const [other] = await containersOf(thisFile.platform.docker.docker, scope(), 'neighbour-service', false);
    const helloAddress = (await call(thisFile.api.url, 'GET', '/api/infra/services/hello-service', { token: admin })).body.instances[0].address as string;
    const [host, port] = helloAddress.split(':');
    // Asynchronous: the API under test answers from this process, and a blocked event loop would let its
    // kept-alive sockets time out under the client's feet.
    const probe = async (containerId: string) =>
      (
        await execFileAsync(
          'docker',
          ['exec', containerId, 'bash', '-c', `timeout 3 bash -c '</dev/tcp/${host}/${port}' 2>/dev/null && echo reached || echo refused`],
          { encoding: 'utf8' },
        )
      ).stdout.trim();
    expect(await probe(other.Id)).toBe('refused');
    // The same probe from the service's own container reaches it: the refusal above is the network's.
    expect(await probe(hello.Id)).toBe('reached');
    expect((await call(thisFile.api.url, 'DELETE', '/api/infra/services/neighbour-service', { token: admin })).status).toBe(202);
  });

  test("a service's own 404 and 500 reach the caller as the service wrote them, with its headers and the request id", async () => {
    for (const status of [404, 500]) {
      const answer = await call(thisFile.api.url, 'GET', `/api/hello/status/${status}`, { token: viewer, headers: { 'X-Request-Id': `relay-${status}` } });
      expect(answer.status).toBe(status);
      expect(answer.headers.get('content-type')).toBe('application/json');
      expect(answer.body).toEqual(expect.objectContaining({ path: `/status/${status}`, userId: 'vic' }));
      expect(answer.headers.get('x-hello-instance')).toEqual(expect.any(String));
      expect(answer.headers.get('x-request-id')).toBe(`relay-${status}`);
    }
  });

  test('the gateway streams a request body to the service and needs a user', async () => {
    const big = 'x'.repeat(3 * 1024 * 1024);
    const answer = await call(thisFile.api.url, 'POST', '/api/hello/upload', { token: viewer, raw: big, headers: { 'content-type': 'text/plain' } });
    expect(answer.body).toEqual(expect.objectContaining({ method: 'POST', bodyBytes: big.length }));
    expectProblem(await call(thisFile.api.url, 'GET', '/api/hello/x'), 401, 'UNAUTHENTICATED');
  });

  test("a client's Expect: 100-continue is answered by the gateway, and the body it then sends reaches the service", async () => {
    const body = 'y'.repeat(64 * 1024);
    const answer = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const request = http.request(`${thisFile.api.url}/api/hello/upload`, {
        method: 'POST',
        headers: { authorization: `Bearer ${viewer}`, expect: '100-continue', 'content-type': 'text/plain', 'content-length': body.length },
      });
      request.on('continue', () => request.end(body));
      request.on('response', (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
      });
      request.on('error', reject);
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(expect.objectContaining({ method: 'POST', bodyBytes: body.length, userId: 'vic' }));
  });

  test('the container is hardened: all capabilities dropped, no-new-privileges, memory, pids and CPU limits, rotated logs, no binds, port not published', async () => {
    const [container] = await containersOf(thisFile.platform.docker.docker, scope(), 'hello-service', false);
    const details = await thisFile.platform.docker.docker.getContainer(container.Id).inspect();
    expect(details.HostConfig.CapDrop).toEqual(['ALL']);
    expect(details.HostConfig.CapAdd ?? []).toEqual([]);
    // Asked per container by the docker driver, set for every container by the engine under the swarm driver: read where it acts.
    const { stdout: status } = await execFileAsync('docker', ['exec', container.Id, 'cat', '/proc/1/status'], { encoding: 'utf8' });
    expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
    expect(details.HostConfig.Privileged).toBe(false);
    expect(details.HostConfig.Memory).toBeGreaterThan(0);
    expect(details.HostConfig.PidsLimit).toBeGreaterThan(0);
    expect(details.HostConfig.NanoCpus).toBe(thisFile.platform.config.deploy.cpus * 1e9);
    expect(details.HostConfig.LogConfig).toEqual({
      Type: 'json-file',
      Config: { 'max-size': thisFile.platform.config.deploy.logMaxSize, 'max-file': String(thisFile.platform.config.deploy.logMaxFiles) },
    });
    expect(details.HostConfig.Binds ?? []).toEqual([]);
    expect(details.Mounts).toEqual([]);
    expect(details.HostConfig.PortBindings ?? {}).toEqual({});
    expect(Object.values(details.NetworkSettings.Ports ?? {}).every((bindings) => bindings === null)).toBe(true);
    // An instance is a container the docker driver named, or a task of the swarm.
    const instanceLabel = thisFile.platform.config.deploy.driver === 'swarm' ? 'com.docker.swarm.task.id' : 'opsflow.instance';
    expect(details.Config.Labels).toEqual(
      expect.objectContaining({ 'opsflow.service': 'hello-service', 'opsflow.dynamic': 'true', [instanceLabel]: expect.any(String) }),
    );
    expect(Object.keys(details.NetworkSettings.Networks)).toEqual([`${thisFile.platform.config.deploy.network}-hello-service`]);
    expect(details.Config.User).toBe('65534:65534');
  });

  test('GET /api/infra/services/{name}/logs: lines prefixed with the instance, secret values masked; follow=true streams events', async () => {
    const logs = await call(thisFile.api.url, 'GET', '/api/infra/services/hello-service/logs?tail=50', { token: admin });
    expect(logs.status).toBe(200);
    expect(logs.text).toMatch(/^\[[0-9a-f]{8}\] hello-server .* listening on 8081 greeting=salaam secret=\*\*\*\* db=postgres:\/\/app:\*\*\*\*@db:5432\/app$/m);
    expect(logs.text).not.toContain(DB_PASSWORD);
    expect(logs.text).not.toContain(URL_PASSWORD);

    const controller = new AbortController();
    const answer = await fetch(`${thisFile.api.url}/api/infra/services/hello-service/logs?follow=true&tail=5`, {
      headers: { authorization: `Bearer ${admin}` },
      signal: controller.signal,
    });
    expect(answer.headers.get('content-type')).toContain('text/event-stream');
    const reader = answer.body!.getReader();
    let received = '';
    while (!received.includes('listening on 8081')) received += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    expect(received).toMatch(/^data: \[[0-9a-f]{8}\] hello-server .* listening on 8081/m);
  });

  test('GET /api/docs/services lists the running service with its OpenAPI URL through the gateway', async () => {
    const docs = await call(thisFile.api.url, 'GET', '/api/docs/services', { token: viewer });
    expect(docs.status).toBe(200);
    expect(docs.body).toEqual(expect.arrayContaining([{ name: 'hello-service', slug: 'hello', openapiUrl: '/api/hello/v3/api-docs' }]));
  });

  test('scale to 3: three healthy containers and requests spread over all three; 0 and 21 -> 400 INVALID_INSTANCES; back to 1', async () => {
    expectProblem(
      await call(thisFile.api.url, 'POST', '/api/infra/services/hello-service/scale', { token: admin, body: { instances: 0 } }),
      400,
      'INVALID_INSTANCES',
    );
    expectProblem(
      await call(thisFile.api.url, 'POST', '/api/infra/services/hello-service/scale', { token: admin, body: { instances: 21 } }),
      400,
      'INVALID_INSTANCES',
    );
    const scaled = await call(thisFile.api.url, 'POST', '/api/infra/services/hello-service/scale', { token: admin, body: { instances: 3 } });
    expect(scaled.status).toBe(202);
    expect(scaled.body).toEqual({
      workflowId: 'scale:hello-service',
      runId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      uiUrl: expect.stringContaining('scale%3Ahello-service'),
    });
    await thisFile.platform.temporal.client.workflow.getHandle(scaled.body.workflowId, scaled.body.runId).result();
    await recordHistory(thisFile.platform.temporal, { workflowId: scaled.body.workflowId, runId: scaled.body.runId, name: 'scale-to-three' });

    expect(await containersOf(thisFile.platform.docker.docker, scope(), 'hello-service', false)).toHaveLength(3);
    const service = await call(thisFile.api.url, 'GET', '/api/infra/services/hello-service', { token: admin });
    expect(service.body).toEqual(expect.objectContaining({ desiredInstances: 3, runningInstances: 3, status: 'RUNNING' }));
    // The deployment view shows the scale run beside the deployments: its run, its link and its stage.
    expect(service.body.operations).toEqual([
      expect.objectContaining({
        kind: 'SCALE',
        workflowId: 'scale:hello-service',
        runId: scaled.body.runId,
        uiUrl: scaled.body.uiUrl,
        status: 'COMPLETED',
        stage: 'DONE',
        closedAt: expect.any(String),
      }),
    ]);
    const seen = new Set<string>();
    for (let i = 0; i < 9; i++) seen.add((await call(thisFile.api.url, 'GET', '/api/hello/who', { token: viewer })).body.instance);
    expect(seen.size).toBe(3);

    const down = await call(thisFile.api.url, 'POST', '/api/infra/services/hello-service/scale', { token: admin, body: { instances: 1 } });
    await thisFile.platform.temporal.client.workflow.getHandle(down.body.workflowId, down.body.runId).result();
    expect(await containersOf(thisFile.platform.docker.docker, scope(), 'hello-service')).toHaveLength(1);
    expect((await call(thisFile.api.url, 'GET', '/api/hello/who', { token: viewer })).status).toBe(200);
  });

  test('the ENV_DB_PASSWORD value is in no API answer, no log line and nowhere in `temporal workflow show` of the deploy', async () => {
    // The container itself has it (it prints it at start): the platform must not repeat it.
    const [container] = await containersOf(thisFile.platform.docker.docker, scope(), 'hello-service', false);
    const raw = await thisFile.platform.docker.docker.getContainer(container.Id).logs({ stdout: true, stderr: true, tail: 100 });
    expect(raw.toString()).toContain(DB_PASSWORD);
    expect(raw.toString()).toContain(URL_PASSWORD);

    const answers: string[] = [];
    for (const path of [
      '/api/infra/services',
      '/api/infra/services/hello-service',
      '/api/infra/services/hello-service/deployments',
      '/api/infra/services/hello-service/logs?tail=100',
      `/api/infra/deployments/${accepted.deploymentId}`,
    ]) {
      const answer = await call(thisFile.api.url, 'GET', path, { token: admin });
      expect(answer.status).toBe(200);
      answers.push(answer.text);
    }
    const history = workflowShow(thisFile.platform, accepted.workflowId, accepted.runId);
    expect(history).toContain('loadDeployPlan');
    expect(apiLog.lines.length).toBeGreaterThan(5);
    for (const haystack of [answers.join('\n'), apiLog.lines.join(''), worker.output(), history, await decodedPayloads(thisFile.platform, history)]) {
      expect(haystack).not.toContain(DB_PASSWORD);
      expect(haystack).not.toContain(URL_PASSWORD);
    }
  });

  test('undeploy of a core service -> 409 SERVICE_NOT_DYNAMIC; scale of one too; an unknown one -> 404', async () => {
    expectProblem(await call(thisFile.api.url, 'DELETE', '/api/infra/services/settings', { token: admin }), 409, 'SERVICE_NOT_DYNAMIC');
    expectProblem(
      await call(thisFile.api.url, 'POST', '/api/infra/services/settings/scale', { token: admin, body: { instances: 2 } }),
      409,
      'SERVICE_NOT_DYNAMIC',
    );
    expectProblem(await call(thisFile.api.url, 'DELETE', '/api/infra/services/no-such-service', { token: admin }), 404, 'SERVICE_NOT_FOUND');
    expectProblem(await call(thisFile.api.url, 'DELETE', '/api/infra/services/hello-service', { token: viewer }), 403, 'FORBIDDEN');
  });

  test('undeploy: a request in flight when it starts is answered whole; the route answers 404 afterwards and no container or image of the service is left', async () => {
    // A request whose body is still coming when the undeploy starts: the service is answering it.
    const half = 'z'.repeat(32 * 1024);
    const request = http.request(`${thisFile.api.url}/api/hello/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${viewer}`, 'content-type': 'text/plain', 'content-length': half.length * 2 },
    });
    const answered = new Promise<{ status: number; body: any }>((resolve, reject) => {
      request.on('response', (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      });
      request.on('error', reject);
    });
    answered.catch(() => undefined);
    request.write(half);
    const adminUrl = thisFile.platform.config.edge.adminUrl!;
    const edgeSees = (what: string, check: () => Promise<boolean>) =>
      waitUntil(what, async () => (await check()) || null, { timeoutMs: 15000, intervalMs: 20 });
    // The edge counts it in flight, as the undeploy's drain reads it.
    await edgeSees('the request in flight at the edge', async () => ((await edgeRequestsInFlight(adminUrl, 'hello-service')) ?? 0) > 0);
    const undeploy = await call(thisFile.api.url, 'DELETE', '/api/infra/services/hello-service', { token: admin });
    expect(undeploy.status).toBe(202);
    // The edge lets the service go (no route names its clusters) while the request is still coming. The rest of its body
    // follows half a second later: after the containers would have stopped with no drain, within the drain (1 s here).
    await edgeSees('the edge to let hello-service go', async () => (await edgeRoutesToService(adminUrl, 'hello-service')) === false);
    await new Promise((resolve) => setTimeout(resolve, 500));
    request.end(half);
    const inFlight = await answered;
    expect({ status: inFlight.status, bodyBytes: inFlight.status === 200 ? JSON.parse(inFlight.body).bodyBytes : inFlight.body }).toEqual({
      status: 200,
      bodyBytes: half.length * 2,
    });
    expect(undeploy.body.workflowId).toBe('undeploy:hello-service');
    await thisFile.platform.temporal.client.workflow.getHandle(undeploy.body.workflowId, undeploy.body.runId).result();
    await recordHistory(thisFile.platform.temporal, { workflowId: undeploy.body.workflowId, runId: undeploy.body.runId, name: 'undeploy-jar-service' });

    expectProblem(await call(thisFile.api.url, 'GET', '/api/hello/x', { token: viewer }), 404, 'NOT_FOUND');
    expectProblem(await call(thisFile.api.url, 'GET', '/api/infra/services/hello-service', { token: admin }), 404, 'SERVICE_NOT_FOUND');
    expect(await containersOf(thisFile.platform.docker.docker, scope(), 'hello-service')).toEqual([]);
    expect(await imagesOf(thisFile.platform.docker.docker, scope(), 'hello-service')).toEqual([]);
  });
});

test('a JAR with application.yml: its name and port are read; an explicit serviceName and port win over them', async () => {
  const yml = 'spring:\n  application:\n    name: yaml-service\nserver:\n  port: 8082\n';
  const jar = await buildJar({ mainClass: 'HelloServer', entries: { 'BOOT-INF/classes/application.yml': yml, 'application.yml': yml } });

  const fromJar = await postJar({ apiUrl: thisFile.api.url, token: admin, jar });
  expect(fromJar.body).toEqual(expect.objectContaining({ serviceName: 'yaml-service', slug: 'yaml' }));
  expect(await deploymentOutcome(thisFile.api.url, admin, fromJar.body.deploymentId)).toEqual(expect.objectContaining({ status: 'RUNNING' }));
  expect((await call(thisFile.api.url, 'GET', '/api/infra/services/yaml-service', { token: admin })).body.port).toBe(8082);
  expect((await call(thisFile.api.url, 'GET', '/api/yaml/hi', { token: viewer })).body.path).toBe('/hi');

  const explicit = await postJar({ apiUrl: thisFile.api.url, token: admin, jar, fields: { serviceName: 'greeter', port: '9090', group: 'tools' } });
  expect(explicit.body).toEqual(expect.objectContaining({ serviceName: 'greeter', slug: 'greeter' }));
  expect(await deploymentOutcome(thisFile.api.url, admin, explicit.body.deploymentId)).toEqual(expect.objectContaining({ status: 'RUNNING' }));
  const greeter = await call(thisFile.api.url, 'GET', '/api/infra/services/greeter', { token: admin });
  expect(greeter.body).toEqual(
    expect.objectContaining({ port: 9090, group: 'tools', instances: [expect.objectContaining({ address: expect.stringMatching(/:9090$/) })] }),
  );
  expect((await call(thisFile.api.url, 'GET', '/api/greeter/hi', { token: viewer })).status).toBe(200);

  await waitUntil('cleanup', async () => {
    for (const name of ['yaml-service', 'greeter']) {
      const undeploy = await call(thisFile.api.url, 'DELETE', `/api/infra/services/${name}`, { token: admin });
      await thisFile.platform.temporal.client.workflow.getHandle(undeploy.body.workflowId, undeploy.body.runId).result();
    }
    return true;
  });
});
