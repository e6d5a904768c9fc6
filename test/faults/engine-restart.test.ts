import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { attachPlatform, RunningApi, TestPlatform } from '../support/platform';
import { call } from '../support/http';
import { waitUntil } from '../support/wait';
import { containersOf } from '../deploy/harness';
import { buildJar, postJar } from '../deploy/jars';

/**
 * The Docker engine restarted under two running services, as an engine upgrade does. The engine stops
 * every container (they run with no restart policy of the engine's: the platform owns their count), so
 * after the restart the reconcile schedule must bring the registry and the edge back in line with what
 * runs. Runs alone, last in `npm test` (npm run test:engine): a restarted engine would disturb any test
 * running beside it.
 */
const SERVICES = ['alpha-service', 'beta-service'];
const slugOf = (name: string) => name.replace(/-service$/, '');

let platform: TestPlatform;
let api: RunningApi;
let admin: string;
/** The arguments of the engine this test stopped, to start it again whatever happens. */
let stoppedEngine: string[] | null = null;

/** The engine this suite talks to: the dockerd in this network namespace serving the default socket. */
function engineProcess(): { pid: number; argv: string[] } {
  const ownNet = fs.readlinkSync('/proc/self/ns/net');
  for (const pid of fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)) {
    try {
      if (fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'dockerd') continue;
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      const hosts = argv.filter((arg, i) => argv[i - 1] === '-H' || argv[i - 1] === '--host' || arg.startsWith('--host='));
      if (fs.readlinkSync(`/proc/${pid}/ns/net`) === ownNet && hosts.every((host) => host.includes('/var/run/docker.sock'))) return { pid, argv };
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  throw new Error('no dockerd of this network namespace serves /var/run/docker.sock: this test restarts the engine .ci/run started');
}

/** Stops the engine (SIGTERM, as a service manager does) and starts it again with the same arguments. */
async function restartEngine(): Promise<number> {
  const { pid, argv } = engineProcess();
  stoppedEngine = argv;
  const startedAt = Date.now();
  process.kill(pid, 'SIGTERM');
  await waitUntil('the engine to stop', () => !fs.existsSync(`/proc/${pid}`), { timeoutMs: 60000, intervalMs: 100 });
  const log = fs.openSync('/tmp/opsflow-dockerd.log', 'a');
  spawn(argv[0], argv.slice(1), { detached: true, stdio: ['ignore', log, log] }).unref();
  await waitUntil('the engine to answer again', () => platform.docker.ping(1000), { timeoutMs: 60000, intervalMs: 250 });
  return Date.now() - startedAt;
}

beforeAll(async () => {
  // The reconcile runs by itself, every 5 s, as an operator's would (every 30 s by default).
  platform = await attachPlatform({ env: { DEPLOY_RECONCILE_SECONDS: '5' } });
  api = await platform.startApi();
  await platform.startWorker(['deployments']);
  admin = await platform.token({ sub: 'ada', roles: ['ADMIN'] });
});

afterAll(async () => {
  // An engine this test stopped and could not start again is started here, so that nothing after it finds none.
  if (!(await platform?.docker.ping(1000)) && stoppedEngine) {
    spawn(stoppedEngine[0], stoppedEngine.slice(1), { detached: true, stdio: 'ignore' }).unref();
    await waitUntil('the engine to answer again', () => platform.docker.ping(1000), { timeoutMs: 60000, intervalMs: 500 }).catch(() => undefined);
  }
  await platform?.close();
});

test('the Docker engine restarted under two running services: the reconcile brings the registry and the edge back to the containers that run, and both answer again', async () => {
  for (const name of SERVICES) {
    const accepted = await postJar({
      apiUrl: api.url,
      token: admin,
      jar: await buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': `spring.application.name=${name}\n` } }),
    });
    expect(accepted.status).toBe(202);
    await waitUntil(
      `${name} running`,
      async () => (await call(api.url, 'GET', `/api/infra/deployments/${accepted.body.deploymentId}`, { token: admin })).body.status === 'RUNNING',
    );
  }
  for (const name of SERVICES) expect((await call(api.url, 'GET', `/api/${slugOf(name)}/x`, { token: admin })).status).toBe(200);

  // Steady traffic to both from before the restart until they answer again. A 503 the edge gives because it
  // still sent the request to an instance that is gone ("upstream connect error", "reset") is a request
  // routed to a dead address; "no healthy upstream" is one the edge held back.
  const deadRouted: Record<string, number[]> = Object.fromEntries(SERVICES.map((name) => [name, []]));
  let trafficOn = true;
  const traffic = Promise.all(
    SERVICES.map(async (name) => {
      while (trafficOn) {
        const answer = await fetch(`${api.url}/api/${slugOf(name)}/x`, {
          headers: { authorization: `Bearer ${admin}` },
          signal: AbortSignal.timeout(5000),
        }).catch(() => null);
        const text = answer && answer.status !== 200 ? await answer.text() : '';
        if (answer && answer.status >= 500 && /upstream connect error|reset|refused/i.test(text)) deadRouted[name].push(Date.now());
        else await answer?.arrayBuffer().catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }),
  );
  const downMs = await restartEngine();
  const restartedAt = Date.now();
  const back: Record<string, number> = {};
  await waitUntil(
    'both services answering through the edge again',
    async () => {
      for (const name of SERVICES) {
        if (back[name] === undefined && (await call(api.url, 'GET', `/api/${slugOf(name)}/x`, { token: admin })).status === 200)
          back[name] = Date.now() - restartedAt;
      }
      return Object.keys(back).length === SERVICES.length;
    },
    { timeoutMs: 120000, intervalMs: 250 },
  );
  trafficOn = false;
  await traffic;
  // Measured and printed, not asserted: a time on a loaded machine is a figure, not a test (docs/reliability.md).
  const deadRoutedMs = Object.fromEntries(
    SERVICES.map((name) => [name, deadRouted[name].length === 0 ? 0 : deadRouted[name][deadRouted[name].length - 1] - deadRouted[name][0]]),
  );

  // What the registry routes to is what runs: each instance a running container, at its address now.
  for (const name of SERVICES) {
    const running = await containersOf(platform.docker.docker, platform.config.deploy.scope, name, false);
    const service = await waitUntil(
      `${name}'s registry in line with the engine`,
      async () => {
        const answer = (await call(api.url, 'GET', `/api/infra/services/${name}`, { token: admin })).body;
        const ids = answer.instances.map((instance: { containerId: string }) => instance.containerId).sort();
        return JSON.stringify(ids) === JSON.stringify(running.map((container) => container.Id).sort()) ? answer : null;
      },
      { timeoutMs: 30000, intervalMs: 250 },
    );
    expect(service.status).toBe('RUNNING');
    expect(service.instances).toEqual([expect.objectContaining({ state: 'HEALTHY' })]);
  }
  console.log(
    `engine restarted in ${downMs} ms under ${SERVICES.length} services: back through the edge ${SERVICES.map((name) => `${name} ${back[name]} ms`).join(', ')} after it answered; ` +
      `requests routed to a dead address: ${SERVICES.map((name) => `${name} ${deadRouted[name].length} over ${deadRoutedMs[name]} ms`).join(', ')} (the health check ejects an instance within about 3 s: every 1 s, 2 failures)`,
  );
}, 600000);
