import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { waitUntil } from '../support/wait';
import { call } from '../support/http';
import { mailTo } from '../support/captured-mail';
import { ctrlC, npmStart, NpmStarted, npmStartEnvironment, NpmStartPorts } from '../support/npm-start';
import { removeScopedDockerObjects } from '../support/docker-cleanup';
import { buildJar, postJar } from '../deploy/jars';
import Docker from 'dockerode';

const SCOPE = 'opsflow-npm-start';

const ROOT = path.resolve(__dirname, '..', '..');

let dataDir: string;
let env: NodeJS.ProcessEnv;
let ports: NpmStartPorts;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-start-'));
  fs.chmodSync(dataDir, 0o755);
  ({ env, ports } = await npmStartEnvironment({ dataDir, scope: SCOPE }));
});

afterAll(async () => {
  await removeScopedDockerObjects(new Docker(), SCOPE).catch(() => undefined);
  fs.rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
});

/** Processes whose command line names the data folder: what `npm start` started, if any is left. */
function processesUsing(folder: string): string[] {
  const found: string[] = [];
  for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const commandLine = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (commandLine.includes(folder)) found.push(`${pid}: ${commandLine}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** What is left of `npm start` after up to 15 s: nothing, when it stopped cleanly. */
async function noProcessLeft(folder: string): Promise<string[]> {
  await waitUntil('every process of npm start to exit', () => processesUsing(folder).length === 0, { timeoutMs: 15000, intervalMs: 250 }).catch(
    () => undefined,
  );
  return processesUsing(folder);
}

/** After a stop: none of the platform's ports answers, and no process of it is left. */
async function expectNothingLeft(): Promise<void> {
  for (const port of [ports.api, ports.edgeAdmin, ports.temporalUi, ports.mailUi, ports.workerMetrics, ports.jaegerOtlp, ports.jaegerUi, ports.prometheus])
    expect({ port, answers: await portAnswers(port) }).toEqual({ port, answers: false });
  expect(await noProcessLeft(dataDir)).toEqual([]);
}

/** Runs `npm start` in this tree, as a terminal would, and waits for its ready banner. */
const startHere = () => npmStart({ cwd: ROOT, env, timeoutMs: 150000 });

/** The supervisor itself (`node … scripts/start.ts`), below npm and its shell. */
function supervisorPid(started: NpmStarted): number {
  const pending = [started.child.pid!];
  while (pending.length > 0) {
    const pid = pending.shift()!;
    const commandLine = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (path.basename(commandLine[0]) === 'node' && commandLine.includes('scripts/start.ts')) return pid;
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      const children = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (children) pending.push(...children.split(/\s+/).map(Number));
    }
  }
  throw new Error('no supervisor process under npm start');
}

/** SIGTERM to the supervisor alone, as a service manager or `kill` sends it; its children get no signal of their own. */
async function terminateSupervisor(started: NpmStarted): Promise<void> {
  const exited = new Promise<void>((resolve) => started.child.once('exit', () => resolve()));
  process.kill(supervisorPid(started), 'SIGTERM');
  await exited;
}

/** The local addresses listening on a TCP port, from the kernel's socket tables (IPv4 and IPv6). */
function listeningAddresses(port: number): string[] {
  const addresses: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state !== '0A' || !local) continue;
      const [hex, portHex] = local.split(':');
      if (parseInt(portHex, 16) !== port) continue;
      if (hex.length === 8) addresses.push(Buffer.from(hex, 'hex').reverse().join('.'));
      else addresses.push(hex === '0'.repeat(32) ? '::' : hex === '00000000000000000000000001000000' ? '::1' : `ipv6:${hex}`);
    }
  }
  return addresses.sort();
}

/** The supervisor's child whose command line has `marker`: a worker, the API, Envoy. */
function childOfSupervisor(started: NpmStarted, marker: string): number {
  const supervisor = supervisorPid(started);
  for (const task of fs.readdirSync(`/proc/${supervisor}/task`)) {
    for (const pid of fs.readFileSync(`/proc/${supervisor}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)) {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').includes(marker)) return pid;
    }
  }
  throw new Error(`no child of the supervisor runs ${marker}`);
}

async function portAnswers(port: number): Promise<boolean> {
  try {
    await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) });
    return true;
  } catch {
    return false;
  }
}

test('npm start brings up a ready platform whose API and worker run compiled JavaScript, and a second start on its ports stops at once saying which; an edge killed under traffic to a deployed service, a killed worker, Temporal dev server and mail capture are started again by its supervisor; Ctrl-C stops it; a second start keeps the data, and SIGTERM to the supervisor alone stops it all', async () => {
  const first = await startHere();
  const api = `http://127.0.0.1:${ports.api}`;
  try {
    const workerMetrics = `http://127.0.0.1:${ports.workerMetrics}/metrics`;
    for (const url of [api, `${api}/api/openapi.json`, `http://127.0.0.1:${ports.temporalUi}`, `http://127.0.0.1:${ports.mailUi}`, workerMetrics]) {
      expect(first.output()).toContain(url);
    }
    // Development accepts the published development secret: nothing may listen beyond this machine.
    for (const [name, port] of Object.entries(ports)) {
      const addresses = listeningAddresses(port);
      expect({ name, addresses: addresses.length > 0 }).toEqual({ name, addresses: true });
      expect({ name, addresses: addresses.filter((address) => address !== '127.0.0.1' && address !== '::1') }).toEqual({ name, addresses: [] });
    }
    const ready = await call(api, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ database: 'up', temporal: 'up', docker: 'up', edge: 'up', jarBaseImage: 'up' });
    // Traces go to the start's own Jaeger: a request through the edge is there, from the edge and the API.
    expect(first.output()).toContain(`http://127.0.0.1:${ports.jaegerUi}/api/traces?service=opsflow-api`);
    await call(api, 'GET', '/api/openapi.json');
    // Prometheus scrapes the API and the worker, with the alert rules loaded.
    const prometheus = `http://127.0.0.1:${ports.prometheus}`;
    const rules = (await call(prometheus, 'GET', '/api/v1/rules')).body.data.groups.flatMap((group: { rules: Array<{ name: string }> }) =>
      group.rules.map((rule) => rule.name),
    );
    expect(rules).toEqual(expect.arrayContaining(['OpsflowWorkerMissing', 'OpsflowDatabaseUnavailable', 'OpsflowEmailFailureRatio']));
    await waitUntil(
      'Prometheus to scrape the API and the worker',
      async () => {
        const targets = (await call(prometheus, 'GET', '/api/v1/targets')).body.data.activeTargets as Array<{ labels: { job: string }; health: string }>;
        return ['opsflow-api', 'opsflow-worker'].every((job) => targets.some((target) => target.labels.job === job && target.health === 'up'));
      },
      40000,
    );
    await waitUntil(
      'the edge and the API in Jaeger',
      async () => {
        const services = (await call(`http://127.0.0.1:${ports.jaegerUi}`, 'GET', '/api/services')).body.data ?? [];
        return services.includes('opsflow-edge') && services.includes('opsflow-api');
      },
      30000,
    );

    // A second start on the same ports stops before it starts anything, naming each port it needs and the
    // setting that moves it; the first platform is untouched.
    const otherData = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-start-again-'));
    fs.chmodSync(otherData, 0o755);
    try {
      const refused = await npmStart({ cwd: ROOT, env: { ...env, DATA_DIR: otherData }, timeoutMs: 60000 }).then(
        () => 'it started',
        (error: Error) => error.message,
      );
      expect(refused).toContain('Start failed: already in use by another process');
      for (const [port, setting] of [
        [ports.api, 'API_PORT'],
        [ports.pg, 'DATABASE_URL'],
        [ports.temporal, 'TEMPORAL_ADDRESS'],
        [ports.mailUi, 'MAIL_CAPTURE_UI_PORT'],
      ] as const) {
        expect(refused).toMatch(new RegExp(`port ${port} \\([^;]*; ${setting} moves it\\)`));
      }
      expect(fs.readdirSync(otherData).filter((name) => name !== 'logs')).toEqual([]);
    } finally {
      fs.rmSync(otherData, { recursive: true, force: true });
    }
    expect((await call(api, 'GET', '/readyz')).status).toBe(200);
    // The front door is Envoy, the API behind it on its own port.
    expect((await fetch(`${api}/healthz`)).headers.get('x-envoy-upstream-service-time')).not.toBeNull();
    expect((await fetch(`http://127.0.0.1:${ports.apiListen}/healthz`)).headers.get('x-envoy-upstream-service-time')).toBeNull();
    expect((await fetch(`http://127.0.0.1:${ports.temporalUi}/`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${ports.mailUi}/`, { headers: { accept: 'text/html' } })).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${ports.mailUi}/api/v1/messages`)).status).toBe(200);
    // The UI's own script: a Mailpit built without its web assets answers its page, and 404 for this.
    expect((await fetch(`http://127.0.0.1:${ports.mailUi}/dist/app.js`)).status).toBe(200);
    // The API and the worker run the compiled platform under plain node, with no transpiler (decision 041).
    for (const entry of ['api/server', 'workers/main']) {
      const [, script, ...rest] = fs.readFileSync(`/proc/${childOfSupervisor(first, `dist/${entry}.js`)}/cmdline`, 'utf8').split('\0');
      expect({ script, tsx: rest.some((word) => word.includes('tsx')) }).toEqual({ script: path.join(ROOT, 'dist', `${entry}.js`), tsx: false });
    }

    // A crashed part is started again by the supervisor, not the end of the platform: the edge killed under
    // steady traffic through it to a deployed service, then the worker (it serves every queue), whose role
    // send below still goes out.
    const jar = await buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': 'spring.application.name=steady-service\n' } });
    const accepted = await postJar({ apiUrl: api, token: first.token, jar });
    expect(accepted.status).toBe(202);
    await waitUntil(
      'the service deployed',
      async () => (await call(api, 'GET', `/api/infra/deployments/${accepted.body.deploymentId}`, { token: first.token })).body.status === 'RUNNING',
    );
    const edgePid = childOfSupervisor(first, 'bootstrap.json');
    const traffic = { ok: 0, failed: 0, firstFailure: 0, lastFailure: 0 };
    let trafficOn = true;
    const load = (async () => {
      while (trafficOn) {
        const answer = await fetch(`${api}/api/steady/x`, { headers: { authorization: `Bearer ${first.token}` }, signal: AbortSignal.timeout(2000) }).then(
          (r) => r.status,
          () => 0,
        );
        if (answer === 200) traffic.ok++;
        else {
          traffic.failed++;
          traffic.lastFailure = Date.now();
          traffic.firstFailure ||= Date.now();
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    await waitUntil('traffic through the edge', () => traffic.ok > 10);
    process.kill(edgePid, 'SIGKILL');
    await waitUntil('the edge started again', () => first.output().includes('edge (Envoy) is running again'), { timeoutMs: 30000 });
    const okWhenBack = traffic.ok;
    await waitUntil('traffic through the new edge', () => traffic.ok > okWhenBack + 20, { timeoutMs: 10000 });
    const failedWhenBack = traffic.failed;
    await waitUntil('more traffic through the new edge', () => traffic.ok > okWhenBack + 120, { timeoutMs: 20000 });
    trafficOn = false;
    await load;
    console.log(
      `edge killed under traffic to a deployed service: ${traffic.failed} requests failed over ${traffic.lastFailure - traffic.firstFailure} ms (none once back), ${traffic.ok} answered`,
    );
    expect(first.output()).toContain('edge (Envoy) exited (code null signal SIGKILL); starting it again');
    expect(childOfSupervisor(first, 'bootstrap.json')).not.toBe(edgePid);
    // Once back, none fails.
    expect(traffic.failed).toBe(failedWhenBack);
    process.kill(childOfSupervisor(first, 'dist/workers/main.js'), 'SIGKILL');
    await waitUntil('the worker started again', () => first.output().includes('worker is running again'), { timeoutMs: 30000 });
    // Temporal's dev server and the mail capture too: the role send below runs through both once they are back.
    process.kill(childOfSupervisor(first, 'start-dev'), 'SIGKILL');
    await waitUntil('the Temporal dev server started again', () => first.output().includes('Temporal dev server is running again'), { timeoutMs: 60000 });
    process.kill(childOfSupervisor(first, 'mailpit'), 'SIGKILL');
    await waitUntil('the mail capture started again', () => first.output().includes('mail capture is running again'), { timeoutMs: 30000 });

    const created = await call(api, 'POST', '/api/directory/users', {
      token: first.token,
      body: { email: 'kept@example.test', name: 'Kept', roles: ['VIEWER'], siteIds: ['s1'] },
    });
    expect(created.status).toBe(201);

    // The development seed: a fresh start sends at once through the mail capture.
    const template = await call(api, 'POST', '/api/email/templates', {
      token: first.token,
      body: { siteId: 'site-1', name: 'hello', roleKey: null, subjectEn: 'Hello {{name}}', bodyEn: '<p>hi</p>', subjectAr: 'مرحبا', bodyAr: '<p>مرحبا</p>' },
    });
    expect((await call(api, 'POST', `/api/email/templates/${template.body.id}/publish`, { token: first.token })).status).toBe(200);
    const sent = await call(api, 'POST', '/api/email/send/role', {
      token: first.token,
      body: { templateId: template.body.id, roleKey: 'MANAGER', siteId: 'site-1', variables: { name: 'team' } },
    });
    expect(sent.body.recipients).toBe(1);
    const subjects = await waitUntil(
      'the role email in the mail capture',
      async () => {
        const found = (await mailTo(`http://127.0.0.1:${ports.mailUi}/api/v1`, 'maya.manager@opsflow.local')).map((mail) => mail.subject);
        return found.length > 0 ? found : null;
      },
      { timeoutMs: 30000, intervalMs: 250 },
    );
    expect(subjects).toEqual(['Hello team']);
  } finally {
    await ctrlC(first);
  }
  await expectNothingLeft();

  const second = await startHere();
  try {
    const users = await call(api, 'GET', '/api/directory/users', { token: second.token });
    // The user made in the first start, and the development seed once, not twice.
    expect(users.body.items.map((u: { email: string }) => u.email).sort()).toEqual(
      [
        'kept@example.test',
        'admin@opsflow.local',
        'maya.manager@opsflow.local',
        'omar.manager@opsflow.local',
        'eli.editor@opsflow.local',
        'layla.editor@opsflow.local',
        'vic.viewer@opsflow.local',
      ].sort(),
    );
    const configs = await call(api, 'GET', '/api/settings/email', { token: second.token });
    expect(configs.body.items.map((c: { configName: string; isActive: boolean }) => [c.configName, c.isActive])).toEqual([['development mail capture', true]]);
  } finally {
    await terminateSupervisor(second);
  }
  await expectNothingLeft();
}, 400000);
