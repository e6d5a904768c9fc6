import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { call } from '../support/http';
import { waitUntil } from '../support/wait';
import { ctrlC, npmStart, NpmStarted, npmStartEnvironment } from '../support/npm-start';

/**
 * `TEMPORAL_SERVER=cluster npm start`: Temporal as two server nodes on the embedded PostgreSQL behind one
 * address, built from the Go module proxy when missing. /readyz names both nodes; the platform's flows run
 * on it; a node killed is started again by the supervisor; Ctrl-C stops the nodes too.
 */
const ROOT = path.resolve(__dirname, '..', '..');

let dataDir: string;
let started: NpmStarted | null = null;

afterAll(async () => {
  if (started) await ctrlC(started, { killAfterMs: 30000 });
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
});

/** Whether something answers TCP on host:port. */
const listens = (address: string) =>
  new Promise<boolean>((resolve) => {
    const [host, port] = address.split(':');
    const socket = net.connect({ host, port: Number(port) });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

test('TEMPORAL_SERVER=cluster npm start: two nodes behind one address, named by /readyz; a publish runs on it; a node killed -9 comes back; Ctrl-C stops them', async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-start-cluster-'));
  fs.chmodSync(dataDir, 0o755);
  const { env, ports } = await npmStartEnvironment({ dataDir, scope: 'opsflow-npm-start-cluster', extra: { TEMPORAL_SERVER: 'cluster' } });
  const running = await npmStart({ cwd: ROOT, env, timeoutMs: 600000 });
  started = running;
  const output = running.output();
  expect(output).toMatch(/Temporal cluster: temporal-1 on 127\.0\.0\.1:\d+, temporal-2 on 127\.0\.0\.1:\d+, behind 127\.0\.0\.1:\d+/);
  const base = `http://127.0.0.1:${ports.api}`;

  const ready = await call(base, 'GET', '/readyz');
  expect(ready.status).toBe(200);
  expect(ready.body.checks).toEqual(expect.objectContaining({ temporal: 'up', temporalNodes: { 'temporal-1': 'up', 'temporal-2': 'up' } }));

  // A platform flow on the cluster: a page published (no approval policy), through its workflow.
  const created = await call(base, 'POST', '/api/content/pages', { token: running.token, body: { siteId: 'site-cluster', name: 'home', slug: 'home', title: 'On a cluster', data: {} } });
  expect(created.status).toBe(201);
  expect((await call(base, 'POST', `/api/content/pages/${created.body.id}/publish`, { token: running.token, body: {} })).status).toBeLessThan(300);
  await waitUntil('the page published', async () => (await call(base, 'GET', `/api/content/pages/${created.body.id}`, { token: running.token })).body.status === 'PUBLISHED', { timeoutMs: 60000 });

  // Node 1 killed -9: /readyz says so while the platform stays ready, and the supervisor starts it again.
  const node1 = /temporal-1 on (127\.0\.0\.1:\d+)/.exec(output)![1];
  const pid = fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .find((candidate) => {
      try {
        const environment = fs.readFileSync(`/proc/${candidate}/environ`, 'utf8');
        return environment.includes(`TEMPORAL_FRONTEND_PORT=${node1.split(':')[1]}\0`);
      } catch {
        return false;
      }
    });
  expect(pid).toBeDefined();
  process.kill(Number(pid), 'SIGKILL');
  await waitUntil('the supervisor to say it restarts node temporal-1', () => /Temporal node temporal-1 exited/.test(running.output()), { timeoutMs: 30000 });
  await waitUntil('node temporal-1 back', async () => (await call(base, 'GET', '/readyz')).body.checks?.temporalNodes?.['temporal-1'] === 'up', { timeoutMs: 120000, intervalMs: 1000 });

  const frontends = [...output.matchAll(/temporal-\d on (127\.0\.0\.1:\d+)/g)].map((match) => match[1]);
  started = null;
  await ctrlC(running);
  for (const frontend of [...frontends, `127.0.0.1:${ports.temporal}`]) expect({ frontend, listens: await listens(frontend) }).toEqual({ frontend, listens: false });
}, 900000);
