import pg from 'pg';
import { startWorkflow } from '../../temporal-config/client';
import { archiveLogs } from '../../workflows/archival/archive-logs';
import { archiveRunWorkflowId } from '../../workflows/archival/definitions';
import { attachPlatform, RunningApi, TestPlatform } from '../support/platform';
import { call } from '../support/http';
import { OwnPostgres, startOwnPostgres } from '../support/own-postgres';
import { freePort } from '../support/slots';
import { startMailCapture, RunningMailCapture } from '../../scripts/platform/mail-capture';
import { publishedTemplate, smtpChannel } from '../messaging/harness';
import { addressesAt } from '../support/captured-mail';
import { containersOf } from '../deploy/harness';
import { buildJar, postJar } from '../deploy/jars';
import { waitUntil } from '../support/wait';
import { archiveFileIds, archiveOutcome, globalRetention } from '../archival/harness';
import { remainingIds, seedManyEmailLogs } from '../archival/seed';
import { fairShareOf } from '../../domain/fairness';

/**
 * PostgreSQL restarted under real work, as an upgrade or a failover does it: a server of this file's own
 * (the suite's is shared), stopped in fast mode and started again on the same data and port. The
 * platform's processes must ride it out: no worker dies of a dropped connection, the API says 503 while
 * the database is away, and the work finishes with every row exactly once.
 */
const ROWS = 200000;
const SITE = 'site-restart';

let server: OwnPostgres;
let platform: TestPlatform;
let api: RunningApi;
let admin: string;
let relay: RunningMailCapture;

beforeAll(async () => {
  server = await startOwnPostgres();
  platform = await attachPlatform({ env: { DATABASE_URL: server.url } });
  api = await platform.startApi();
  await platform.startWorker(['archival', 'messaging', 'approvals', 'deployments'], { API_INTERNAL_URL: api.url });
  admin = await platform.token({ sub: 'ada', roles: ['ADMIN'] });
  // A relay of this file's own: two thousand messages stay out of the run's shared mail capture.
  relay = await startMailCapture({ smtpPort: await freePort(), uiPort: await freePort() });
}, 180000);

afterAll(async () => {
  await relay?.stop();
  await platform?.close();
  await server?.remove();
});

async function seedRows(siteId: string): Promise<number[]> {
  const seeded = await seedManyEmailLogs(platform.db, { databaseUrl: server.url, siteId, count: ROWS });
  expect(seeded.length).toBe(ROWS);
  return seeded;
}

const startRun = (siteId: string) =>
  startWorkflow(platform.temporal, archiveLogs, {
    workflowId: archiveRunWorkflowId('EMAIL_LOG'),
    taskQueue: 'archival',
    args: [{ logType: 'EMAIL_LOG', siteId, heartbeatTimeout: '10 seconds', maxRowsPerPart: 20000 }],
    priority: fairShareOf('archiveRun', siteId),
  });

/** Waits until the run has recorded its first part: the export is under way on its COPY connection. */
const exportUnderWay = (siteId: string) =>
  waitUntil(
    'the first part of the run to be exported',
    async () => {
      const parts = await platform.db('settings.archive_part').where({ site_id: siteId }).count<{ n: string }[]>({ n: '*' });
      return Number(parts[0].n) >= 1;
    },
    { timeoutMs: 120000, intervalMs: 50 },
  );

/** The run completed with every seeded row archived exactly once and none left in the table. */
async function expectArchivedOnce(run: { workflowId: string; runId: string }, siteId: string, seeded: number[]): Promise<number[]> {
  const outcome = await archiveOutcome(platform, run.workflowId, run.runId);
  expect(outcome.status).toBe('COMPLETED');
  expect(outcome.sites).toEqual([expect.objectContaining({ siteId, state: 'DONE', rowsExported: ROWS, rowsDeleted: ROWS })]);
  expect(await remainingIds(platform.db, siteId)).toEqual([]);
  const archived = (await archiveFileIds(platform, api.url, siteId)).flat();
  expect(archived.length).toBe(ROWS);
  expect([...archived].sort((a, b) => a - b)).toEqual(seeded);
  return archived;
}

/** Stops the server in fast mode, checks what the API says meanwhile, and starts it again: what was measured. */
async function restartPostgres(): Promise<{ downMs: number; whileDown: { readyz: number; database: string; list: number; code: string } }> {
  const stoppedAt = Date.now();
  await server.stop();
  const readyz = await call(api.url, 'GET', '/readyz');
  const list = await call(api.url, 'GET', '/api/settings/archive-policies', { token: admin });
  await new Promise((resolve) => setTimeout(resolve, 3000));
  await server.start();
  return {
    downMs: Date.now() - stoppedAt,
    whileDown: { readyz: readyz.status, database: readyz.body.checks?.database, list: list.status, code: list.body.code },
  };
}

beforeAll(async () => {
  await globalRetention(api.url, admin, 'EMAIL_LOG');
});

test(`PostgreSQL restarted in the middle of a ${ROWS}-row archive run: the run completes, every row archived exactly once, and the API answers 503 DATABASE_UNAVAILABLE while it is down`, async () => {
  const seeded = await seedRows(SITE);
  const run = await startRun(SITE);
  await exportUnderWay(SITE);
  const restart = await restartPostgres();
  expect(restart.whileDown).toEqual({ readyz: 503, database: 'down', list: 503, code: 'DATABASE_UNAVAILABLE' });
  const recoveredFrom = Date.now();
  const archived = await expectArchivedOnce(run, SITE, seeded);
  console.log(
    `postgres restart mid-archive: down ${restart.downMs} ms; run finished ${Date.now() - recoveredFrom} ms after; ${archived.length} rows archived, none twice, none left`,
  );
}, 600000);

test(`every connection of the database dropped every 300 ms for 8 s in the middle of a ${ROWS}-row archive run (a failover's pools): the worker lives on, and every row is archived exactly once`, async () => {
  const seeded = await seedRows('site-storm');
  const killer = new pg.Client({ connectionString: server.url });
  await killer.connect();
  let dropped = 0;
  // From the start of the run: its export, on a connection of its own, is what a dropped connection must not kill.
  const run = await startRun('site-storm');
  const until = Date.now() + 8000;
  while (Date.now() < until) {
    const { rows } = await killer.query<{ n: string }>(
      'select count(pg_terminate_backend(pid)) as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
    );
    dropped += Number(rows[0].n);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  await killer.end();
  expect(dropped).toBeGreaterThan(0);
  expect(platform.runningWorkers()).toHaveLength(1);
  const archived = await expectArchivedOnce(run, 'site-storm', seeded);
  expect(platform.runningWorkers()).toHaveLength(1);
  console.log(`connections dropped mid-archive: ${dropped} backends terminated over 8 s; ${archived.length} rows archived, none twice, none left`);
}, 600000);

test('PostgreSQL restarted in the middle of a 2,000-recipient role send: every recipient gets the message exactly once, and every log row ends SUCCESS', async () => {
  const count = 2000;
  const address = (i: number) => `restart${i}@pg-restart.example`;
  await platform
    .db('directory.user')
    .insert(Array.from({ length: count }, (_, i) => ({ email: address(i), name: `R ${i}`, locale: 'en', roles: ['VIEWER'], site_ids: ['site-r'] })));
  await smtpChannel(api.url, admin, 'own relay', relay.smtpPort);
  const editor = await platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-r'] });
  const templateId = await publishedTemplate(api.url, editor, 'site-r');
  const sent = await call(api.url, 'POST', '/api/email/send/role', { token: editor, body: { templateId, roleKey: 'VIEWER', siteId: 'site-r' } });
  expect(sent.body.recipients).toBe(count);
  const delivered = async () =>
    Number(((await platform.db('email.email_log').where({ batch_id: sent.body.batchId, status: 'SUCCESS' }).count({ n: '*' }).first()) as { n: string }).n);
  await waitUntil('part of the batch delivered', async () => (await delivered()) >= 100, { timeoutMs: 60000, intervalMs: 50 });

  const restart = await restartPostgres();
  const result = await platform.temporal.client.workflow.getHandle(sent.body.workflowId).result();
  expect(result).toEqual(expect.objectContaining({ done: true, failed: 0 }));
  const rows = await platform.db('email.email_log').where({ batch_id: sent.body.batchId }).select('recipient', 'status');
  expect(rows).toHaveLength(count);
  expect(rows.filter((row) => row.status !== 'SUCCESS')).toEqual([]);
  const received = await addressesAt(relay.apiUrl, 'pg-restart.example');
  expect(received.length).toBe(count);
  expect(new Set(received).size).toBe(count);
  console.log(
    `postgres restart mid-send: down ${restart.downMs} ms; ${count} recipients, ${received.length} messages received, ${received.length - new Set(received).size} twice`,
  );
}, 600000);

test('PostgreSQL restarted in the middle of a JAR deploy: the deploy ends (RUNNING, reached through the edge, or FAILED with nothing left running), never stuck', async () => {
  const jar = await buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': 'spring.application.name=restart-service\n' } });
  const accepted = await postJar({ apiUrl: api.url, token: admin, jar });
  expect(accepted.status).toBe(202);
  await waitUntil(
    'the deploy to be building or starting',
    async () => {
      const [row] = await platform.db('infra.deployment').where({ id: accepted.body.deploymentId }).select('stage');
      return row && ['BUILDING_IMAGE', 'STARTING', 'HEALTH_CHECK'].includes(row.stage);
    },
    { timeoutMs: 60000, intervalMs: 50 },
  );
  const restart = await restartPostgres();
  // The run closes by itself, whatever its outcome.
  await platform.temporal.client.workflow
    .getHandle(accepted.body.workflowId, accepted.body.runId)
    .result()
    .catch(() => undefined);
  const outcome = await waitUntil('the deployment row to settle', async () => {
    const answer = await call(api.url, 'GET', `/api/infra/deployments/${accepted.body.deploymentId}`, { token: admin });
    return answer.status === 200 && answer.body.status !== 'DEPLOYING' ? answer.body : null;
  });
  expect(['RUNNING', 'FAILED']).toContain(outcome.status);
  if (outcome.status === 'RUNNING') {
    expect((await call(api.url, 'GET', '/api/restart/x', { token: admin })).status).toBe(200);
  } else {
    expect(await containersOf(platform.docker.docker, platform.config.deploy.scope, 'restart-service', false)).toEqual([]);
  }
  console.log(
    `postgres restart mid-deploy: down ${restart.downMs} ms; the deploy ended ${outcome.status}${outcome.error ? ` (${outcome.error.code ?? outcome.error})` : ''}`,
  );
}, 600000);
