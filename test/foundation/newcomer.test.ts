import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { call } from '../support/http';
import { freePort, freePortRun } from '../support/slots';
import { waitUntil, succeeds } from '../support/wait';
import { removeScopedDockerObjects } from '../support/docker-cleanup';
import { buildJar, postJar } from '../deploy/jars';
import { ctrlC, npmStart, NpmStarted } from '../support/npm-start';

/**
 * The newcomer's path, as on a fresh machine with only the system packages: a copy of the tree with no
 * tools folder and a JRE base image that does not exist yet, `npm start`, and a JAR deployed and reached
 * through the edge with nothing run by hand. Then a second platform with another API_PORT beside it.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const docker = new Docker();
const IMAGE = `opsflow/jre-newcomer:${process.pid}`;
const SCOPE = 'opsflow-newcomer';
const PINNED_NODE = fs.readFileSync(path.join(ROOT, '.nvmrc'), 'utf8').trim();
const majorOf = (version: string) => Number(version.replace(/^v/, '').split('.')[0]);

/** A started platform and where its front door is. */
interface Started extends NpmStarted {
  api: string;
}

/** Whether the engine has the JRE image this test builds. */
const imageExists = () => succeeds(docker.getImage(IMAGE).inspect());

let copy: string;
const running: Started[] = [];
const dataDirs: string[] = [];

/** The tree as a clone has it (tracked and new files), plus the built console; node_modules shared; no .tools, no .data. */
function copyOfTheTree(): string {
  const target = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-newcomer-'));
  fs.chmodSync(target, 0o755);
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);
  for (const file of [...files, 'console/dist', 'console/src/api/schema.d.ts']) {
    const from = path.join(ROOT, file);
    if (!fs.existsSync(from)) continue;
    fs.mkdirSync(path.dirname(path.join(target, file)), { recursive: true });
    fs.cpSync(from, path.join(target, file), { recursive: true, preserveTimestamps: true });
  }
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(target, 'node_modules'));
  return target;
}

/** Every port `npm start` binds, free, with no EDGE_ADMIN_URL: the edge's admin follows API_PORT. */
async function platformEnv(dataDir: string, scope: string): Promise<NodeJS.ProcessEnv> {
  const [api, pg, temporal, temporalUi, smtp, mailUi] = [await freePortRun(2), ...(await Promise.all(Array.from({ length: 5 }, () => freePort())))];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    API_PORT: String(api),
    DATABASE_URL: `postgres://opsflow:opsflow@127.0.0.1:${pg}/opsflow`,
    TEMPORAL_ADDRESS: `127.0.0.1:${temporal}`,
    TEMPORAL_UI_URL: `http://127.0.0.1:${temporalUi}`,
    SMTP_CAPTURE_PORT: String(smtp),
    MAIL_CAPTURE_UI_PORT: String(mailUi),
    DEPLOY_SCOPE: scope,
    DEPLOY_NETWORK: scope,
  };
  // As a terminal has it: npm start sets NODE_ENV=development itself (jest sets `test`), and nothing of the suite's platform leaks in.
  for (const name of [
    'NODE_ENV',
    'WORKFLOW_BUNDLE_PATH',
    'OPSFLOW_TEST_PLATFORM',
    'EDGE_ADMIN_URL',
    'EDGE_DIR',
    'API_LISTEN_PORT',
    'DEPLOY_BASE_IMAGE',
    'DEPLOY_BASE_IMAGE_BUILD',
    'TEMPORAL_CLI',
  ])
    delete env[name];
  // A machine with no Temporal CLI of its own, whose Node is its own (Node 20 here), not the pinned one CI
  // puts first: the start installs both.
  env.PATH = (env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => !fs.existsSync(path.join(dir, 'temporal')) && !dir.includes(`${path.sep}.tools${path.sep}node${path.sep}`))
    .join(path.delimiter);
  return env;
}

/** Runs `npm start` in `cwd` until its ready banner; kept for the clean-up from the moment it runs. */
async function startPlatform(cwd: string, env: NodeJS.ProcessEnv): Promise<Started> {
  const api = `http://127.0.0.1:${env.API_PORT}`;
  const started = await npmStart({ cwd, env, timeoutMs: 240000, onSpawn: (spawned) => running.push(Object.assign(spawned, { api }) as Started) });
  return Object.assign(started, { api });
}

beforeAll(() => {
  copy = copyOfTheTree();
});

afterAll(async () => {
  for (const started of running.reverse()) await ctrlC(started, { killAfterMs: 30000 }).catch(() => undefined);
  for (const scope of [SCOPE, `${SCOPE}-second`]) await removeScopedDockerObjects(docker, scope).catch(() => undefined);
  await docker
    .getImage(IMAGE)
    .remove({ force: true })
    .catch(() => undefined);
  for (const dir of [copy, ...dataDirs]) if (dir) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
});

test("a newcomer's first `npm start` installs its tools and builds the JRE image itself; the first JAR deploy waits for the image and answers through the edge", async () => {
  expect(fs.existsSync(path.join(copy, '.tools'))).toBe(false);
  expect(await imageExists()).toBe(false);
  const env = await platformEnv(path.join(copy, '.data'), SCOPE);
  // Only the image's name is another one, so that this test builds it from nothing; as npm start does for its default image, built from Debian packages.
  const first = await startPlatform(copy, { ...env, DEPLOY_BASE_IMAGE: IMAGE, DEPLOY_BASE_IMAGE_BUILD: 'debian' });

  expect(first.output()).toContain('installing Temporal CLI');
  expect(first.output()).toContain('installing Envoy 1.40.0');
  expect(first.output()).toContain(`JAR deploys on ${IMAGE}: missing, built in the background`);
  expect(first.output()).toContain(`Edge admin       http://127.0.0.1:${Number(env.API_PORT) + 2}`);
  // Its processes run on the pinned Node, fetched on this first start when the machine's is older.
  const machineNode = execFileSync('node', ['--version'], { env, encoding: 'utf8' }).trim();
  if (majorOf(machineNode) < majorOf(PINNED_NODE)) expect(first.output()).toContain(`installing Node ${PINNED_NODE}`);
  const metrics = await call(first.api, 'GET', '/metrics', { token: first.token });
  expect(String(metrics.body).match(/^nodejs_version_info\{version="([^"]+)"/m)?.[1]).toBe(`v${PINNED_NODE}`);
  const ready = await call(first.api, 'GET', '/readyz');
  expect(ready.status).toBe(200);
  expect(ready.body.checks).toEqual(expect.objectContaining({ database: 'up', temporal: 'up', docker: 'up', edge: 'up' }));

  const jar = await buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': 'spring.application.name=newcomer-service\n' } });
  const accepted = await postJar({ apiUrl: first.api, token: first.token, jar });
  expect(accepted.status).toBe(202);
  const outcome = await waitUntil(
    'the first JAR deploy to end',
    async () => {
      const answer = await call(first.api, 'GET', `/api/infra/deployments/${accepted.body.deploymentId}`, { token: first.token });
      return answer.body.status !== 'DEPLOYING' ? answer.body : null;
    },
    { timeoutMs: 300000, intervalMs: 1000 },
  );
  expect({ status: outcome.status, error: outcome.error }).toEqual({ status: 'RUNNING', error: undefined });
  const reached = await call(first.api, 'GET', '/api/newcomer/hello', { token: first.token });
  expect(reached.status).toBe(200);
  expect(reached.body).toEqual(expect.objectContaining({ path: '/hello', userId: 'dev-admin' }));
  // The image was built here from Debian packages, not pulled; the start said how the build went. Should it be
  // missing (one fresh-clone run, 2026-11-27, after a deploy on it had answered), the failure says what the
  // engine has of the JRE images and what the start printed of its build.
  const present = await imageExists();
  const seen = present
    ? 'present'
    : `missing; the engine has ${(await docker.listImages())
        .flatMap((image) => image.RepoTags ?? [])
        .filter((tag) => tag.includes('jre'))
        .join(', ')}; the start said: ${first
        .output()
        .split('\n')
        .filter((line) => /JRE|base image/.test(line))
        .join(' | ')}`;
  expect(seen).toBe('present');
  expect(first.output()).toContain(`done building the JAR base image ${IMAGE}`);
  expect((await call(first.api, 'GET', '/readyz')).body.checks.jarBaseImage).toBe('up');
}, 600000);

test('a second platform with another API_PORT and data folder comes up beside the first, each edge admin on its own port', async () => {
  const first = running[0];
  expect(first).toBeDefined();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-second-'));
  fs.chmodSync(dataDir, 0o755);
  dataDirs.push(dataDir);
  // A scope of its own: its reconcile must not take the first platform's containers for orphans.
  const env = await platformEnv(dataDir, `${SCOPE}-second`);
  const second = await startPlatform(ROOT, { ...env, DEPLOY_BASE_IMAGE: IMAGE, DEPLOY_BASE_IMAGE_BUILD: 'debian' });
  expect(second.output()).toContain(`Edge admin       http://127.0.0.1:${Number(env.API_PORT) + 2}`);
  for (const started of [first, second]) {
    const ready = await call(started.api, 'GET', '/readyz');
    expect({ api: started.api, status: ready.status }).toEqual({ api: started.api, status: 200 });
  }
  expect((await call(second.api, 'GET', '/api/directory/me', { token: second.token })).status).toBe(200);
}, 300000);
