import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { TEMPORAL_UI_PERMISSIONS } from '../../scripts/platform/temporal-ui';
import { clientTlsOf } from '../../temporal-config/server-certificates';
import { loadSigningKey, signServiceToken } from '../../temporal-config/service-identity';
import { call } from '../support/http';
import { waitUntil } from '../support/wait';
import { ctrlC, npmStart, NpmStarted, npmStartEnvironment } from '../support/npm-start';

/**
 * `TEMPORAL_SERVER=cluster npm start`: Temporal as two server nodes on the embedded PostgreSQL behind one
 * address, built from the Go module proxy when missing. /readyz names both nodes; the platform's flows run
 * on it; the Web UI reads it and changes nothing; a node killed is started again by the supervisor; Ctrl-C
 * stops the nodes and the UI too.
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

test('TEMPORAL_SERVER=cluster npm start: two nodes behind one address, named by /readyz; a publish runs on it; the read-only Web UI shows it; a node killed -9 comes back; Ctrl-C stops them', async () => {
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
  const created = await call(base, 'POST', '/api/content/pages', {
    token: running.token,
    body: { siteId: 'site-cluster', name: 'home', slug: 'home', title: 'On a cluster', data: {} },
  });
  expect(created.status).toBe(201);
  expect((await call(base, 'POST', `/api/content/pages/${created.body.id}/publish`, { token: running.token, body: {} })).status).toBeLessThan(300);
  await waitUntil(
    'the page published',
    async () => (await call(base, 'GET', `/api/content/pages/${created.body.id}`, { token: running.token })).body.status === 'PUBLISHED',
    { timeoutMs: 60000 },
  );

  // The Web UI, built like the server, on TEMPORAL_UI_URL: read-only. Its own API reads through the locked
  // door with the token it is given (the publish run is listed, its input sealed); a write through it is
  // refused by the door; a request under another name (a page rebound to 127.0.0.1) is refused.
  const ui = `http://127.0.0.1:${ports.temporalUi}`;
  expect(output).toMatch(new RegExp(`Temporal Web UI [\\d.]+ on ${ui.replace(/\./g, '\\.')} \\(read-only\\)`));
  const page = await fetch(`${ui}/namespaces/default/workflows`);
  expect({ status: page.status, html: /<html/i.test(await page.text()) }).toEqual({ status: 200, html: true });
  const listed = await fetch(`${ui}/api/v1/namespaces/default/workflows?query=${encodeURIComponent("WorkflowType='publishComponent'")}`);
  const executions = ((await listed.json()) as { executions?: Array<{ execution: { workflowId: string; runId: string } }> }).executions ?? [];
  expect({ status: listed.status, runs: executions.length }).toEqual({ status: 200, runs: 1 });
  const run = executions[0].execution;
  const history = await fetch(`${ui}/api/v1/namespaces/default/workflows/${encodeURIComponent(run.workflowId)}/history?execution.runId=${run.runId}`);
  const historyText = await history.text();
  // Payload bytes come as base64: the sealed encoding's name, and the title neither in clear nor in base64.
  const inBase64 = (text: string) => Buffer.from(text).toString('base64').slice(0, -4);
  expect({
    status: history.status,
    sealed: historyText.includes(inBase64('binary/encrypted')),
    title: [historyText.includes('On a cluster'), historyText.includes(inBase64('On a cluster'))],
  }).toEqual({ status: 200, sealed: true, title: [false, false] });
  const terminate = await fetch(`${ui}/api/v1/namespaces/default/workflows/${encodeURIComponent(run.workflowId)}/terminate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ reason: 'from the UI' }),
  });
  expect(terminate.status).toBe(405);
  // Whatever the UI would let through, the door refuses a write under the permissions it hands the UI.
  const identityDir = path.join(dataDir, 'temporal-identity');
  const apiKey = signServiceToken(loadSigningKey(identityDir), { subject: 'opsflow-web-ui', permissions: TEMPORAL_UI_PERMISSIONS });
  const connection = await Connection.connect({ address: `127.0.0.1:${ports.temporal}`, apiKey, tls: clientTlsOf(path.join(identityDir, 'tls', 'ca.pem'))! });
  try {
    const client = new Client({ connection, namespace: 'default' });
    expect((await client.workflow.getHandle(run.workflowId).describe()).workflowId).toBe(run.workflowId);
    // gRPC PERMISSION_DENIED (7), "Request unauthorized": the authorizer answers before the run is looked at.
    const refused = await client.workflow
      .getHandle(run.workflowId)
      .terminate('from the UI')
      .then(
        () => null,
        (error: { cause?: { code?: number; details?: string } }) => error.cause,
      );
    expect({ code: refused?.code, details: refused?.details }).toEqual({ code: 7, details: expect.stringContaining('Request unauthorized') });
  } finally {
    await connection.close();
  }
  const rebound = await new Promise<number>((resolve, reject) =>
    http
      .get(
        { host: '127.0.0.1', port: ports.temporalUi, path: '/api/v1/namespaces/default/workflows', headers: { host: `attacker.example:${ports.temporalUi}` } },
        (answer) => (answer.resume(), resolve(answer.statusCode!)),
      )
      .once('error', reject),
  );
  expect(rebound).toBe(403);
  // Another page in the operator's browser (another site, or Mailpit's mails on another loopback port)
  // cannot make the UI run anything on its behalf: only the UI's own pages, and opening it, pass.
  // (node:http, so that the headers are sent exactly as a browser would send them.)
  const asBrowser = (method: string, target: string, headers: Record<string, string>) =>
    new Promise<number>((resolve, reject) => {
      const sent = http.request(
        { host: '127.0.0.1', port: ports.temporalUi, method, path: target, headers: { 'content-type': 'text/plain', ...headers } },
        (answer) => (answer.resume(), resolve(answer.statusCode!)),
      );
      sent.once('error', reject);
      sent.end(method === 'POST' ? '{}' : undefined);
    });
  const query = `/api/v1/namespaces/default/workflows/${encodeURIComponent(run.workflowId)}/query/progress`;
  const forgeries: Array<Record<string, string>> = [
    { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' },
    { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'cors' },
    { origin: 'http://127.0.0.1:1' },
  ];
  for (const headers of forgeries) expect({ headers, status: await asBrowser('POST', query, headers) }).toEqual({ headers, status: 403 });
  expect(await asBrowser('GET', '/', { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' })).toBe(200);

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
  await waitUntil('node temporal-1 back', async () => (await call(base, 'GET', '/readyz')).body.checks?.temporalNodes?.['temporal-1'] === 'up', {
    timeoutMs: 120000,
    intervalMs: 1000,
  });

  const frontends = [...output.matchAll(/temporal-\d on (127\.0\.0\.1:\d+)/g)].map((match) => match[1]);
  started = null;
  await ctrlC(running);
  for (const frontend of [...frontends, `127.0.0.1:${ports.temporal}`, `127.0.0.1:${ports.temporalUi}`])
    expect({ frontend, listens: await listens(frontend) }).toEqual({ frontend, listens: false });
}, 900000);
