import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { Client, Connection } from '@temporalio/client';
import { RunningTemporalCluster } from '../../scripts/platform/temporal-cluster';
import { findTemporalCli } from '../../temporal-config/temporal-cli';
import { payloadCodecOf, platformDataConverter } from '../../temporal-config/payload-codec';
import { loadOrCreateSigningKey, signServiceToken } from '../../temporal-config/service-identity';
import { clientTlsOf, ensureTemporalTls, TEMPORAL_TLS_SERVER_NAME } from '../../temporal-config/server-certificates';
import { RunningApi, sharedPostgresAdminUrl, TestPlatform } from '../support/platform';
import { OwnTemporalCluster, startOwnTemporalCluster } from '../support/own-temporal-cluster';
import { call } from '../support/http';
import { pagesNeedApproval } from '../approvals/harness';
import { rejectionOf } from '../support/failures';
import { waitUntil } from '../support/wait';

/**
 * The cluster takes only the platform's tokens: Temporal's own authorizer and claim mapper take only tokens signed with the
 * platform's key, for its audience, with the permissions they name. A caller with no token, or with a token
 * of a key of their own, reads and writes nothing; the platform's own flows run. Histories on the cluster's
 * PostgreSQL hold no byte of a marker put in a title and a comment.
 */
const run = promisify(execFile);
const marker = `MARKER${randomUUID().replace(/-/g, '')}`;

let own: OwnTemporalCluster;
let cluster: RunningTemporalCluster;
let platform: TestPlatform;
let api: RunningApi;
let dir: string;
let admin: string;
let publishRun: { workflowId: string; runId: string };
let correlationId: string;

beforeAll(async () => {
  own = await startOwnTemporalCluster('door');
  ({ cluster, platform, dir } = own);
  api = await platform.startApi();
  await platform.startWorker(['approvals'], { API_INTERNAL_URL: api.url });
  admin = await platform.token({ sub: 'ada', roles: ['ADMIN'] });
  const editor = await platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-door'] });
  // A one-stage approval: the publish run waits with the marked title and comment in its history.
  await pagesNeedApproval(api.url, admin, { siteId: 'site-door', name: 'one', stages: [{ name: 'Review', role: 'MANAGER' }] });
  const page = await call(api.url, 'POST', '/api/content/pages', {
    token: editor,
    body: { siteId: 'site-door', name: `title ${marker}`, slug: 'sealed', title: `title ${marker}`, data: {} },
  });
  expect(page.status).toBe(201);
  const submitted = await call(api.url, 'POST', `/api/content/pages/${page.body.id}/publish`, { token: editor, body: { comment: `comment ${marker}` } });
  expect(submitted.body.status).toBe('PENDING_APPROVAL');
  publishRun = { workflowId: submitted.body.workflowId, runId: submitted.body.runId };
  correlationId = submitted.body.correlationId;
}, 300000);

afterAll(async () => {
  await own?.close();
});

/** The first node's environment (its ports) and process id, read from /proc. */
async function nodeEnvironment(): Promise<Record<string, string>> {
  for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const environment = Object.fromEntries(
        fs
          .readFileSync(`/proc/${pid}/environ`, 'utf8')
          .split('\0')
          .filter(Boolean)
          .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
      );
      if (environment.TEMPORAL_FRONTEND_PORT === cluster.nodes[0].frontend.split(':')[1]) return { ...environment, pid };
    } catch {
      // gone meanwhile
    }
  }
  throw new Error('no process of the first node');
}

/** The server's refusal: gRPC PERMISSION_DENIED (7), "Request unauthorized". */
const DENIED = /\bcode 7\b.*Request unauthorized/;

/** What a call that must fail failed with: each error of its cause chain, code and message. */
async function refusal(work: Promise<unknown>): Promise<string> {
  const error = await rejectionOf(work);
  if (error === null) return 'it succeeded';
  const chain: string[] = [];
  for (let link = error as { code?: unknown; message?: string; cause?: unknown } | undefined; link; link = link.cause as typeof link)
    chain.push(`code ${String(link.code ?? '-')}: ${link.message}`);
  return chain.join(' <- ');
}

/** A client of the platform's namespace through the door, with this token (or none), and the platform's codec. */
function clientWith(apiKey: string | null): { client: Client; close(): Promise<void> } {
  // Lazy: each call meets the door itself (a connect would be refused first, for the foreign token).
  const connection = Connection.lazy({ address: cluster.address, ...(apiKey ? { apiKey } : {}), tls: clientTlsOf(cluster.tlsCaFile) ?? false });
  return {
    client: new Client({ connection, namespace: platform.config.temporal.namespace, dataConverter: platformDataConverter(payloadCodecOf(platform.config)) }),
    close: () => connection.close(),
  };
}

/** A token as the platform's would be, but signed with a key of the caller's own: under its own kid, or the platform's. */
function foreignToken(permissions: string[], kid?: string): string {
  const key = loadOrCreateSigningKey(path.join(dir, 'foreign'));
  return signServiceToken({ ...key, kid: kid ?? key.kid }, { subject: 'mallory', permissions });
}

test('temporal workflow list without credentials is refused by the cluster', async () => {
  const cli = findTemporalCli();
  if (!cli) throw new Error('the Temporal CLI is needed to call the cluster as an operator would');
  // Over TLS, trusting the cluster's authority: what is refused is the missing token, not the connection.
  const tlsFlags = ['--tls-ca-path', cluster.tlsCaFile, '--tls-server-name', TEMPORAL_TLS_SERVER_NAME];
  const listed = await run(cli.path, ['workflow', 'list', '--address', cluster.address, '--namespace', platform.config.temporal.namespace, ...tlsFlags]).then(
    () => 'listed',
    (error: { stderr?: string }) => error.stderr ?? '',
  );
  expect(listed).toMatch(/PermissionDenied|Request unauthorized/i);
});

test('a start or a signal of publishComponent with no token, or with a token the platform did not sign, is refused; the run is untouched', async () => {
  const input = {
    componentType: 'PAGE',
    id: randomUUID(),
    siteId: 'site-door',
    revision: 1,
    requestedBy: 'mallory',
    stages: [],
    callbackPath: '/internal/approvals/x',
  };
  const everything = [`${platform.config.temporal.namespace}:admin`, 'temporal-system:admin'];
  for (const apiKey of [null, foreignToken(everything), foreignToken(everything, loadOrCreateSigningKey(cluster.identityDir).kid)]) {
    const caller = clientWith(apiKey);
    try {
      expect(
        await refusal(caller.client.workflow.start('publishComponent', { taskQueue: 'approvals', workflowId: `mallory-${randomUUID()}`, args: [input] })),
      ).toMatch(DENIED);
      expect(
        await refusal(caller.client.workflow.getHandle(publishRun.workflowId).signal('decision', { stage: 0, decision: 'APPROVED', decidedBy: 'mallory' })),
      ).toMatch(DENIED);
      expect(await refusal(caller.client.workflow.getHandle(publishRun.workflowId).describe())).toMatch(DENIED);
    } finally {
      await caller.close();
    }
  }
  const approval = await call(api.url, 'GET', `/api/workflow/approvals/${correlationId}`, { token: admin });
  expect(approval.body).toEqual(expect.objectContaining({ status: 'PENDING', decisions: [] }));
  const description = await platform.temporal.client.workflow.getHandle(publishRun.workflowId).describe();
  expect(description.status.name).toBe('RUNNING');
});

test("the platform's own token opens only its namespace: another namespace and the cluster's administration are refused", async () => {
  const key = loadOrCreateSigningKey(cluster.identityDir);
  const token = signServiceToken(key, { subject: 'opsflow-api', permissions: [`${platform.config.temporal.namespace}:write`] });
  const connection = await Connection.connect({ address: cluster.address, apiKey: token, tls: clientTlsOf(cluster.tlsCaFile) ?? false });
  try {
    await expect(connection.workflowService.describeNamespace({ namespace: platform.config.temporal.namespace })).resolves.toBeDefined();
    expect(await refusal(connection.workflowService.listWorkflowExecutions({ namespace: 'temporal-system' }))).toMatch(DENIED);
    expect(await refusal(connection.workflowService.registerNamespace({ namespace: `mallory-${randomUUID()}` }))).toMatch(DENIED);
  } finally {
    await connection.close();
  }
});

test("TLS: a client in plaintext, or trusting another authority, gets no answer; with the platform's authority it does", async () => {
  const token = signServiceToken(loadOrCreateSigningKey(cluster.identityDir), {
    subject: 'opsflow-api',
    permissions: [`${platform.config.temporal.namespace}:write`],
  });
  const describe = async (tls: ReturnType<typeof clientTlsOf> | false) => {
    const connection = Connection.lazy({ address: cluster.address, apiKey: token, tls, connectTimeout: 3000 });
    try {
      return await refusal(
        connection.withDeadline(Date.now() + 2000, () => connection.workflowService.describeNamespace({ namespace: platform.config.temporal.namespace })),
      );
    } finally {
      await connection.close();
    }
  };
  const otherAuthority = ensureTemporalTls(path.join(dir, 'other-authority'));
  expect(await describe(false)).not.toBe('it succeeded');
  expect(await describe(clientTlsOf(otherAuthority.caFile))).not.toBe('it succeeded');
  expect(await describe(clientTlsOf(cluster.tlsCaFile))).toBe('it succeeded');
});

test("between nodes, mutual TLS: a neighbour that reaches a node's history port or its internal frontend with the platform's authority but no certificate of its own is refused; with the nodes' certificate it is answered", async () => {
  const tlsFiles = ensureTemporalTls(path.dirname(cluster.tlsCaFile));
  const knock = (port: number, clientCertificate: { cert: Buffer; key: Buffer } | null) =>
    new Promise<string>((resolve) => {
      const socket = tlsConnect({
        host: '127.0.0.1',
        port,
        ca: fs.readFileSync(cluster.tlsCaFile),
        servername: TEMPORAL_TLS_SERVER_NAME,
        ALPNProtocols: ['h2'],
        ...(clientCertificate ?? {}),
      });
      socket.once('secureConnect', () => {
        // TLS 1.3 ends the client's side before the server checks the client: its refusal comes as the first read.
        socket.once('data', () => (socket.destroy(), resolve('answered')));
        socket.once('close', () => resolve('refused: closed'));
        socket.write(Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'));
      });
      socket.once('error', (error) => resolve(`refused: ${error.message}`));
    });
  const nodeCertificate = { cert: fs.readFileSync(tlsFiles.certFile), key: fs.readFileSync(tlsFiles.keyFile) };
  for (const variable of ['TEMPORAL_HISTORY_PORT', 'TEMPORAL_INTERNAL_FRONTEND_PORT']) {
    const port = Number((await nodeEnvironment())[variable]);
    expect({ variable, without: await knock(port, null) }).toEqual({ variable, without: expect.stringMatching(/^refused/) });
    // The control: the port speaks TLS and answers the nodes' certificate, so the refusal above is the missing certificate's.
    expect({ variable, with: await knock(port, nodeCertificate) }).toEqual({ variable, with: 'answered' });
  }
});

test("a node listens on the ports it was given and no other: no HTTP API (the internal frontend's would make any caller a system admin)", async () => {
  const environment = await nodeEnvironment();
  expect(Object.keys(environment).filter((name) => /^TEMPORAL_.*HTTP/.test(name))).toEqual([]);
  const given = Object.entries(environment)
    .filter(([name]) => /^TEMPORAL_.*PORT$/.test(name) && name !== 'TEMPORAL_SQL_PORT')
    .map(([, value]) => Number(value));
  const { stdout } = await run('ss', ['-ltnpH']);
  const listening = stdout
    .split('\n')
    .filter((line) => line.includes(`pid=${environment.pid},`))
    .map((line) => Number(/:(\d+)\s/.exec(line.trim().split(/\s+/)[3] + ' ')?.[1]));
  expect(listening.length).toBeGreaterThan(0);
  expect([...new Set(listening)].sort((a, b) => a - b)).toEqual([...new Set(given)].sort((a, b) => a - b));
});

test("the cluster's PostgreSQL holds the publish run, and no byte of the marker from its title or comment, in any table of either database", async () => {
  const postgres = new URL(sharedPostgresAdminUrl());
  const found: string[] = [];
  let runSeen = false;
  for (const database of [own.databases.history, own.databases.visibility]) {
    const url = new URL(postgres.href);
    url.pathname = `/${database}`;
    const client = new pg.Client({ connectionString: url.href });
    await client.connect();
    try {
      const { rows: columns } = await client.query<{ table_name: string; column_name: string; data_type: string }>(
        "select table_name, column_name, data_type from information_schema.columns where table_schema = 'public' and data_type in ('bytea', 'text', 'character varying', 'jsonb', 'json')",
      );
      for (const column of columns) {
        const asBytes = column.data_type === 'bytea' ? `"${column.column_name}"` : `convert_to("${column.column_name}"::text, 'UTF8')`;
        const count = async (needle: string) =>
          Number(
            (
              await client.query<{ n: string }>(`select count(*) as n from "${column.table_name}" where position($1::bytea in ${asBytes}) > 0`, [
                Buffer.from(needle),
              ])
            ).rows[0].n,
          );
        if ((await count(marker)) > 0 || (await count(marker.toLowerCase())) > 0) found.push(`${database}.${column.table_name}.${column.column_name}`);
        if ((await count(publishRun.workflowId)) > 0) runSeen = true;
      }
    } finally {
      await client.end();
    }
  }
  // Ids are plaintext: the search does find what is there.
  expect(runSeen).toBe(true);
  expect(found).toEqual([]);
});

test('through the codec endpoint an ADMIN reads the marker decoded', async () => {
  const history = await platform.temporal.connection.workflowService.getWorkflowExecutionHistory({
    namespace: platform.config.temporal.namespace,
    execution: publishRun,
  });
  const payloads = history.history!.events!.flatMap((event) => event.workflowExecutionStartedEventAttributes?.input?.payloads ?? []);
  expect(payloads.length).toBeGreaterThan(0);
  const body = {
    payloads: payloads.map((payload) => ({
      metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([name, value]) => [name, Buffer.from(value).toString('base64')])),
      data: Buffer.from(payload.data ?? []).toString('base64'),
    })),
  };
  expect(JSON.stringify(body)).not.toContain(marker);
  const decoded = await call(api.url, 'POST', '/api/temporal/codec/decode', { token: admin, body });
  expect(decoded.status).toBe(200);
  const texts = (decoded.body.payloads as Array<{ data: string }>).map((payload) => Buffer.from(payload.data, 'base64').toString('utf8')).join('\n');
  expect(texts).toContain(`title ${marker}`);
  expect(texts).toContain(`comment ${marker}`);
});

test('a node restarted after another process took one of its ports comes up on others, the door sends to its new frontend, and with the other node stopped it serves the waiting run alone', async () => {
  const [other, moved] = cluster.nodes;
  const held = moved.frontend;
  await moved.stop();
  // What a neighbour does under load: binds a port the stopped node held, before the node is started again.
  // It answers nobody: whoever still dials the old port (the door, the other node) is cut off at once.
  const squatter = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => squatter.once('error', reject).listen(Number(held.split(':')[1]), '127.0.0.1', () => resolve()));
  try {
    await moved.start();
    expect(moved.running()).toBe(true);
    expect(moved.frontend).not.toBe(held);
    await other.stop();
    try {
      const description = await waitUntil(
        'the waiting run described through the door with only the moved node up',
        () =>
          platform.temporal.client.workflow
            .getHandle(publishRun.workflowId)
            .describe()
            .catch(() => null),
        { timeoutMs: 120000, intervalMs: 1000 },
      );
      expect(description.status.name).toBe('RUNNING');
    } finally {
      await other.start();
    }
  } finally {
    await new Promise((resolve) => squatter.close(resolve));
  }
}, 300000);
