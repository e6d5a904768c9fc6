import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { deploymentOutcome, steadyTraffic } from '../deploy/harness';
import { call } from '../support/http';
import { waitUntil } from '../support/wait';
import { archiveFiles, archiveSite, restoreFile, seedOldEmailLogs } from './archive-steps';
import { buildImages, type ComposeStack, composeStack, endDrill } from './stack';
import { addPeople, batchDone, deployHello, mailFor, mailpitChannel, publishThroughApproval, sendToRole, signIn, type Tokens } from './steps';

/**
 * Drill 1, install: from an empty engine (no container, no volume of the stack), the `.env` docs/production.md
 * asks for and `docker compose up -d`; then every module once, through the edge only. Prints the time to a
 * working stack.
 */
const SITE = 'drill-site';
let stack: ComposeStack;
let tokens: Tokens;

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-install-drill-'));
  stack = await composeStack(dir);
  await buildImages(stack);
  await stack.removeDeployedServices();
  await stack.down({ volumes: true });
  const started = Date.now();
  await stack.up();
  console.log(`install drill: a working stack from an empty engine in ${((Date.now() - started) / 1000).toFixed(0)} s (images already built)`);
  tokens = await signIn(stack, SITE);
}, 1800000);

afterAll(() => endDrill(stack), 300000);

test('the edge refuses a caller without a token and lets an ADMIN in', async () => {
  expect((await call(stack.baseUrl, 'GET', '/api/infra/services')).status).toBe(401);
  expect((await call(stack.baseUrl, 'GET', '/api/infra/services', { token: tokens.admin })).status).toBe(200);
});

test('the API and both workers run compiled JavaScript under plain node, and the image holds no TypeScript tooling', async () => {
  for (const service of ['api', 'worker', 'deploy-worker']) {
    // Process 1 of the service's container: what its command started (the compose file sets no init).
    const commandLine = (await stack.compose(['exec', '-T', service, 'cat', '/proc/1/cmdline'])).split('\0').filter(Boolean);
    expect({ service, program: commandLine[0], entry: commandLine[1] }).toEqual({ service, program: 'node', entry: expect.stringMatching(/^dist\/.+\.js$/) });
  }
  const resolvable = `console.log(JSON.stringify(['tsx', 'typescript', 'esbuild'].filter((name) => { try { require.resolve(name); return true; } catch { return false; } })))`;
  expect(JSON.parse((await stack.compose(['exec', '-T', 'api', 'node', '-e', resolvable])).trim())).toEqual([]);
});

/** Asks the edge for /healthz until stopped; answers what each request got: its status, or why it got none. */
function edgeProbe(baseUrl: string) {
  const outcomes: string[] = [];
  let running = true;
  const loop = (async () => {
    while (running)
      outcomes.push(
        await fetch(`${baseUrl}/healthz`).then(
          (answer) => String(answer.status),
          (error: Error) => String((error.cause as Error)?.message ?? error.message),
        ),
      );
  })();
  return { outcomes, stop: async () => ((running = false), await loop, outcomes) };
}

test('a JAR deploys and is reached through the edge, which refuses no connection meanwhile; its limits change in place, read back from the engine', async () => {
  const probe = edgeProbe(stack.baseUrl);
  const accepted = await deployHello(stack, tokens.admin, { name: 'drill-service', version: '1' });
  expect(await deploymentOutcome(stack.baseUrl, tokens.admin, accepted.deploymentId, 300000)).toMatchObject({ status: 'RUNNING', stage: 'RUNNING' });
  // The deploy joins the edge to the service's network: the edge's published port must not move with it.
  const outcomes = await probe.stop();
  expect({ requests: outcomes.length > 100, failed: outcomes.filter((outcome) => outcome !== '200') }).toEqual({ requests: true, failed: [] });
  const answer = await call(stack.baseUrl, 'GET', `/api/${accepted.slug}/hello`, { token: tokens.editor });
  expect({ status: answer.status, version: answer.body.version, user: answer.body.userId }).toEqual({ status: 200, version: '1', user: 'drill-editor' });
  // The API reaches the engine only through the read-only proxy: the change is the deployments worker's run.
  const before = await call(stack.baseUrl, 'GET', '/api/infra/services/drill-service/limits', { token: tokens.admin });
  const changed = await waitUntil(
    'the limits change to be taken (the deploy run closes first)',
    async () => {
      const patched = await call(stack.baseUrl, 'PATCH', '/api/infra/services/drill-service/limits', {
        token: tokens.admin,
        body: { memoryMb: 256, pids: 200 },
      });
      return patched.status === 409 && patched.body.code === 'DEPLOYMENT_IN_PROGRESS' ? null : patched;
    },
    { timeoutMs: 120000, intervalMs: 1000 },
  );
  expect({ status: changed.status, body: changed.status === 200 ? null : changed.body }).toEqual({ status: 200, body: null });
  expect(changed.body.instances.map((instance: { limits: unknown }) => instance.limits)).toEqual([{ memoryMb: 256, cpus: 1, pids: 200 }]);
  // In place: the same container, no restart.
  expect(changed.body.instances.map((instance: { containerId: string }) => instance.containerId)).toEqual(
    before.body.instances.map((instance: { containerId: string }) => instance.containerId),
  );
  const inspected = JSON.parse(await stack.docker(['inspect', changed.body.instances[0].containerId]))[0].HostConfig;
  expect({ memory: inspected.Memory, pids: inspected.PidsLimit }).toEqual({ memory: 256 * 1024 * 1024, pids: 200 });
});

/** Asks the docker-reader from inside the API's container for each `[method, path]`: the status of each (paths sent as written). */
async function askDockerReader(requests: Array<[string, string]>): Promise<number[]> {
  const script = `const http = require('node:http');
    const ask = ([method, path]) => new Promise((resolve) => http.request({ host: 'docker-reader', port: 2375, method, path }, (answer) => { answer.resume(); resolve(answer.statusCode); }).on('error', () => resolve(0)).end());
    Promise.all(${JSON.stringify(requests)}.map(ask)).then((statuses) => console.log(JSON.stringify(statuses)));`;
  return JSON.parse((await stack.compose(['exec', '-T', 'api', 'node', '-e', script])).trim());
}

test("the API's view of the engine lets through only the reads it makes: no write, no container's files, no tricks", async () => {
  const edge = (await stack.docker(['inspect', '--format', '{{.Id}}', 'opsflow-edge'])).trim();
  const allowed: Array<[string, string]> = [
    ['GET', '/_ping'],
    ['GET', '/v1.41/version'],
    ['GET', '/v1.41/containers/json?all=1'],
    ['GET', `/v1.41/containers/${edge}/json`],
    ['GET', `/v1.41/containers/${edge}/logs?stdout=1&tail=1`],
    ['GET', '/v1.41/images/eclipse-temurin:17-jre/json'],
  ];
  const refused: Array<[string, string]> = [
    ['GET', `/v1.41/containers/${edge}/archive?path=/`],
    ['GET', `/v1.41/containers/${edge}/export`],
    ['POST', '/v1.41/containers/create'],
    ['DELETE', `/v1.41/containers/${edge}`],
    ['POST', `/v1.41/containers/${edge}/update`],
    ['GET', '/v1.41/images/eclipse-temurin:17-jre/get'],
    ['GET', '/v1.41/events'],
    ['GET', '/v1.41/info'],
    ['GET', `/v1.41/containers/json/../${edge}/archive`],
    ['GET', `/v1.41/images/x%2F..%2F..%2Fcontainers%2F${edge}%2Farchive%3Fpath%3D%2F/json`],
    ['GET', `/v1.41//containers/${edge}/archive`],
  ];
  const statuses = await askDockerReader([...allowed, ...refused]);
  expect(statuses.slice(0, allowed.length).map((status, index) => [allowed[index][1], status])).toEqual(allowed.map(([, route]) => [route, 200]));
  expect(statuses.slice(allowed.length).map((status, index) => [refused[index][1], status])).toEqual(refused.map(([, route]) => [route, 403]));
});

test('a canary rollout runs to the end under steady traffic, and no request fails', async () => {
  const traffic = steadyTraffic({ apiUrl: stack.baseUrl, token: tokens.editor, slug: 'drill' });
  try {
    const accepted = await deployHello(stack, tokens.admin, {
      name: 'drill-service',
      version: '2',
      redeploy: true,
      rollout: { steps: [25, 100], pauseSeconds: 3, maxErrorRate: 0.02, minRequests: 10 },
    });
    const ended = await deploymentOutcome(stack.baseUrl, tokens.admin, accepted.deploymentId, 300000);
    expect({ status: ended.status, weight: ended.rolloutState?.weight, error: ended.error ?? null }).toEqual({ status: 'RUNNING', weight: 100, error: null });
  } finally {
    await traffic.stop();
  }
  const failed = traffic.answers.filter((answer) => answer.status !== 200);
  console.log(`install drill: ${traffic.answers.length} requests across the rollout, ${failed.length} failed`);
  expect(failed).toEqual([]);
  expect(traffic.answers.at(-1)?.version).toBe('2');
});

test("a page is published through one manager's approval", async () => {
  const page = await publishThroughApproval(stack, tokens, SITE, 'drill-home');
  expect(page.status).toBe('PUBLISHED');
  const seen = await call(stack.baseUrl, 'GET', `/api/public/sites/${SITE}/pages/drill-home`);
  expect({ status: seen.status, title: seen.body.title }).toEqual({ status: 200, title: 'Drill drill-home' });
});

test('a role email reaches every recipient in the mail capture', async () => {
  await mailpitChannel(stack, tokens.admin);
  const people = await addPeople(stack, tokens.admin, { site: SITE, role: 'EDITOR', count: 3, tag: 'install' });
  const sent = await sendToRole(stack, tokens, SITE, 'EDITOR');
  expect(sent.recipients).toBe(3);
  expect(await batchDone(stack, tokens.admin, sent.batchId)).toMatchObject({ success: 3, failed: 0 });
  for (const address of people) expect((await mailFor(stack, address)).length).toBe(1);
});

test('a log table is archived to the S3 store, each file downloads with its checksum, and a restore puts the rows back', async () => {
  await seedOldEmailLogs(stack, SITE, 500);
  const archived = await archiveSite(stack, tokens.admin, SITE);
  expect({ exported: archived.rowsExported, deleted: archived.rowsDeleted }).toEqual({ exported: 500, deleted: 500 });
  const files = await archiveFiles(stack, tokens.admin, SITE);
  expect(files.length).toBeGreaterThan(0);
  const restored = await restoreFile(stack, tokens.admin, files[0].id);
  expect(restored.rowsInFile).toBeGreaterThan(0);
  expect({ status: restored.status, error: restored.error ?? null, inserted: restored.rowsInserted }).toEqual({
    status: 'COMPLETED',
    error: null,
    inserted: restored.rowsInFile,
  });
});

test("the Temporal Web UI lists the runs with an operator's token, and only an ADMIN opens their payloads through the codec", async () => {
  // Signed where the administrator's key is: a one-shot container of the setup job, the only service
  // besides the migrate job that mounts it (the API holds only the workload key: #58, finding 6).
  const operatorToken = (
    await stack.compose([
      'run',
      '--rm',
      '--no-deps',
      '-T',
      'temporal-setup',
      'node',
      'dist/scripts/temporal-token.js',
      '--sub',
      'drill-operator',
      '--permissions',
      'default:read',
      '--minutes',
      '5',
    ])
  ).trim();
  const ui = (route: string) => fetch(`${stack.temporalUiUrl}/api/v1/namespaces/default/${route}`, { headers: { authorization: `Bearer ${operatorToken}` } });
  const listed = await ui(`workflows?query=${encodeURIComponent("WorkflowType='publishComponent'")}`);
  const runs = ((await listed.json()) as { executions?: Array<{ execution: { workflowId: string; runId: string } }> }).executions ?? [];
  // The template's publish and the page's: each a run.
  expect({ status: listed.status, runs: runs.length }).toEqual({ status: 200, runs: 2 });
  const { workflowId, runId } = runs[0].execution;
  const history = (await (await ui(`workflows/${encodeURIComponent(workflowId)}/history?execution.runId=${runId}`)).json()) as {
    history: { events: Array<{ workflowExecutionStartedEventAttributes?: { input: { payloads: unknown[] } } }> };
  };
  const sealed = history.history.events[0].workflowExecutionStartedEventAttributes!.input;
  // What the UI's page does with each payload: the codec endpoint, with the signed-in user's token.
  const opened = await call(stack.baseUrl, 'POST', '/api/temporal/codec/decode', { token: tokens.admin, body: sealed });
  expect(opened.status).toBe(200);
  expect(Buffer.from(opened.body.payloads[0].data, 'base64').toString()).toContain('drill');
  expect((await call(stack.baseUrl, 'POST', '/api/temporal/codec/decode', { token: tokens.manager, body: sealed })).status).toBe(403);
  expect((await call(stack.baseUrl, 'POST', '/api/temporal/codec/decode', { body: sealed })).status).toBe(401);
});
