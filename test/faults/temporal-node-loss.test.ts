import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startWorkflow } from '../../temporal-config/client';
import { archiveLogs } from '../../workflows/archival/archive-logs';
import { archiveRunWorkflowId } from '../../workflows/archival/definitions';
import { ensureTemporalServer } from '../../scripts/temporal-server';
import { ensureClusterNamespaces, RunningTemporalCluster, startTemporalCluster } from '../../scripts/platform/temporal-cluster';
import { startMailCapture, RunningMailCapture } from '../../scripts/platform/mail-capture';
import { attachPlatform, RunningApi, sharedPostgresAdminUrl, TestPlatform } from '../support/platform';
import { call } from '../support/http';
import { freePort } from '../support/slots';
import { waitUntil } from '../support/wait';
import { publishedTemplate } from '../messaging/harness';
import { archiveFileIds, archiveOutcome } from '../archival/harness';
import { remainingIds, seedManyEmailLogs } from '../archival/seed';

/**
 * Temporal as a cluster of two nodes on PostgreSQL, behind one address, and one node lost (kill -9) in
 * the middle of real work: an archive run, a two-stage approval between its decisions, a role send. Each
 * workload runs twice: node 1 killed in the first, brought back, node 2 killed in the second. Every run
 * must end as it would have without the kill.
 */
const ROWS = 200000;
const RECIPIENTS = 2000;

let cluster: RunningTemporalCluster;
let platform: TestPlatform;
let api: RunningApi;
let admin: string;
let relay: RunningMailCapture;
let dir: string;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-temporal-cluster-'));
  const binaries = await ensureTemporalServer();
  const postgres = new URL(sharedPostgresAdminUrl());
  cluster = await startTemporalCluster({
    binaries,
    sql: { host: postgres.hostname, port: Number(postgres.port), user: decodeURIComponent(postgres.username), password: decodeURIComponent(postgres.password) },
    databases: { history: 'temporal_node_loss', visibility: 'temporal_node_loss_visibility' },
    fresh: true,
    namespaces: [],
    dir,
    identityDir: path.join(dir, 'identity'),
  });
  platform = await attachPlatform({ env: { TEMPORAL_ADDRESS: cluster.address, TEMPORAL_IDENTITY_DIR: cluster.identityDir, TEMPORAL_TLS_CA_FILE: cluster.tlsCaFile! } });
  await ensureClusterNamespaces(cluster, [platform.config.temporalNamespace]);
  api = await platform.startApi();
  await platform.startWorker(['archival', 'messaging', 'approvals'], { API_INTERNAL_URL: api.url });
  admin = await platform.token({ sub: 'ada', name: 'Ada Admin', roles: ['ADMIN'] });
  relay = await startMailCapture({ smtpPort: await freePort(), uiPort: await freePort() });
  await call(api.url, 'POST', '/api/settings/archive-policies', { token: admin, body: { logType: 'EMAIL_LOG', siteId: null, retentionDays: 30, enabled: true } });
}, 300000);

afterAll(async () => {
  await relay?.stop();
  await platform?.close();
  await cluster?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** Kills node `index` (kill -9), waits for the work to finish on the other node alone, then brings it back. */
async function loseNode<T>(index: number, untilDone: () => Promise<T>): Promise<{ node: string; finishedAfterMs: number; result: T }> {
  const node = cluster.nodes[index];
  const killedAt = Date.now();
  await node.kill();
  expect(node.running()).toBe(false);
  const result = await untilDone();
  const finishedAfterMs = Date.now() - killedAt;
  expect(node.running()).toBe(false);
  await node.start();
  return { node: node.name, finishedAfterMs, result };
}

const ROUNDS = [
  { round: 1, victim: 0 },
  { round: 2, victim: 1 },
];

test(`a node killed in the middle of a ${ROWS}-row archive run, then the other in a second run: every row archived exactly once, none lost`, async () => {
  for (const { round, victim } of ROUNDS) {
    const site = `site-node-loss-${round}`;
    const seeded = await seedManyEmailLogs(platform.db, { databaseUrl: platform.config.databaseUrl, siteId: site, count: ROWS });
    const run = await startWorkflow(platform.temporal, archiveLogs, {
      workflowId: archiveRunWorkflowId('EMAIL_LOG'),
      taskQueue: 'archival',
      args: [{ logType: 'EMAIL_LOG', siteId: site, heartbeatTimeout: '10 seconds', maxRowsPerPart: 20000 }],
    });
    await waitUntil('the first part of the run to be exported', async () => {
      const parts = await platform.db('settings.archive_part').where({ site_id: site }).count<{ n: string }[]>({ n: '*' });
      return Number(parts[0].n) >= 1;
    }, { timeoutMs: 120000, intervalMs: 50 });
    const lost = await loseNode(victim, () => archiveOutcome(platform, run.workflowId, run.runId));
    const outcome = lost.result;
    expect(outcome.status).toBe('COMPLETED');
    expect(outcome.sites).toEqual([expect.objectContaining({ siteId: site, state: 'DONE', rowsExported: ROWS, rowsDeleted: ROWS })]);
    expect(await remainingIds(platform.db, site)).toEqual([]);
    const archived = (await archiveFileIds(platform, api.url, site)).flat();
    expect([...archived].sort((a, b) => a - b)).toEqual(seeded);
    console.log(`temporal ${lost.node} killed mid-archive: the run finished ${lost.finishedAfterMs} ms later on the other node alone: ${archived.length} rows archived, ${archived.length - new Set(archived).size} twice, none left`);
  }
}, 900000);

test('a node killed between the two decisions of a two-stage approval, then the other in a second one: each is decided once and publishes the approved revision', async () => {
  const definition = await call(api.url, 'POST', '/api/workflow/definitions', {
    token: admin,
    body: { siteId: 'site-node-loss', name: 'review then sign-off', stages: [{ name: 'Review', role: 'MANAGER' }, { name: 'Sign-off', role: 'ADMIN' }] },
  });
  expect((await call(api.url, 'POST', `/api/workflow/definitions/${definition.body.id}/publish`, { token: admin })).status).toBe(200);
  expect((await call(api.url, 'POST', '/api/workflow/approvals/policies', { token: admin, body: { componentType: 'PAGE', enabled: true, siteId: 'site-node-loss', workflowDefinitionId: definition.body.id } })).status).toBe(201);
  const editor = await platform.token({ sub: 'eda', name: 'Eda Editor', roles: ['EDITOR'], sites: ['site-node-loss'] });
  const manager = await platform.token({ sub: 'max', name: 'Max Manager', roles: ['MANAGER'], sites: ['site-node-loss'] });
  for (const { round, victim } of ROUNDS) {
    const created = await call(api.url, 'POST', '/api/content/pages', { token: editor, body: { siteId: 'site-node-loss', name: `p${round}`, slug: `p${round}`, title: `round ${round}`, data: { round } } });
    expect(created.status).toBe(201);
    const submitted = await call(api.url, 'POST', `/api/content/pages/${created.body.id}/publish`, { token: editor, body: { comment: 'please' } });
    expect(submitted.status).toBe(202);
    const { correlationId, workflowId } = submitted.body;
    const decide = (token: string) => call(api.url, 'POST', `/api/workflow/approvals/${correlationId}/decide`, { token, body: { decision: 'APPROVED', comment: 'ok' } });
    expect((await decide(manager)).body).toEqual(expect.objectContaining({ status: 'PENDING', currentStage: 1 }));
    let refusedWhileDown = 0;
    const lost = await loseNode(victim, async () => {
      // The sign-off, as a person would give it: tried again until the platform takes it.
      const decided = await waitUntil('the sign-off to be taken with a node down', async () => {
        const answer = await decide(admin);
        if (answer.status !== 200) refusedWhileDown++;
        return answer.status === 200 ? answer : null;
      }, { timeoutMs: 120000, intervalMs: 500 });
      expect(decided.body.status).toBe('APPROVED');
      return platform.temporal.client.workflow.getHandle(workflowId).result();
    });
    const outcome = lost.result;
    expect(outcome).toEqual(expect.objectContaining({ stage: 'PUBLISHED' }));
    const approval = (await call(api.url, 'GET', `/api/workflow/approvals/${correlationId}`, { token: admin })).body;
    expect(approval.status).toBe('APPROVED');
    expect(approval.decisions.map((decision: { stage: number; decision: string }) => [decision.stage, decision.decision])).toEqual([
      [0, 'APPROVED'],
      [1, 'APPROVED'],
    ]);
    const page = (await call(api.url, 'GET', `/api/content/pages/${created.body.id}`, { token: editor })).body;
    expect(page.status).toBe('PUBLISHED');
    expect(page.publishedRev).toBe(outcome.revision);
    console.log(`temporal ${lost.node} killed between the decisions: published ${lost.finishedAfterMs} ms later on the other node alone; decided once, published revision ${outcome.revision}; the sign-off was refused ${refusedWhileDown} times while the node was down`);
  }
}, 600000);

test(`a node killed in the middle of a ${RECIPIENTS}-recipient role send, then the other in a second one: every recipient gets the message exactly once`, async () => {
  const created = await call(api.url, 'POST', '/api/settings/email', { token: admin, body: { configName: 'own relay', transport: 'SMTP', smtpHost: '127.0.0.1', smtpPort: relay.smtpPort, isActive: true } });
  expect(created.status).toBe(201);
  for (const { round, victim } of ROUNDS) {
    const site = `site-send-${round}`;
    const domain = `node-loss-${round}.example`;
    await platform.db('directory.user').insert(Array.from({ length: RECIPIENTS }, (_, i) => ({ email: `r${i}@${domain}`, name: `R ${i}`, locale: 'en', roles: ['VIEWER'], site_ids: [site] })));
    const editor = await platform.token({ sub: `eda-${round}`, roles: ['EDITOR'], sites: [site] });
    const templateId = await publishedTemplate(api.url, editor, site);
    const sent = await call(api.url, 'POST', '/api/email/send/role', { token: editor, body: { templateId, roleKey: 'VIEWER', siteId: site } });
    expect(sent.body.recipients).toBe(RECIPIENTS);
    const delivered = async () => Number(((await platform.db('email.email_log').where({ batch_id: sent.body.batchId, status: 'SUCCESS' }).count({ n: '*' }).first()) as { n: string }).n);
    await waitUntil('part of the batch delivered', async () => (await delivered()) >= 100, { timeoutMs: 120000, intervalMs: 50 });
    const lost = await loseNode(victim, () => platform.temporal.client.workflow.getHandle(sent.body.workflowId).result());
    expect(lost.result).toEqual(expect.objectContaining({ done: true, failed: 0 }));
    const rows = await platform.db('email.email_log').where({ batch_id: sent.body.batchId }).select('status');
    expect(rows).toHaveLength(RECIPIENTS);
    expect(rows.filter((row) => row.status !== 'SUCCESS')).toEqual([]);
    const mails = (await (await fetch(relay.apiUrl)).json()) as Array<{ to: Array<{ address: string }> }>;
    const received = mails.flatMap((mail) => mail.to.map((to) => to.address)).filter((to) => to.endsWith(`@${domain}`));
    expect(received.length).toBe(RECIPIENTS);
    expect(new Set(received).size).toBe(RECIPIENTS);
    console.log(`temporal ${lost.node} killed mid-send: the batch finished ${lost.finishedAfterMs} ms later on the other node alone; ${RECIPIENTS} recipients, ${received.length} messages, ${received.length - new Set(received).size} twice`);
  }
}, 900000);
