import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { PROJECT_ROOT } from '../../../lib/project-root';
import { platformWithApi } from '../../../test/support/platform';
import { call, expectProblem } from '../../../test/support/http';
import { createDocker } from '../../../adapters/docker';
import { createDb } from '../../../data/db';
import { writeJobLog } from '../../../data/scheduler-job-log';
import { temporal as proto } from '@temporalio/proto';
import { ALL_TASK_QUEUES } from '../../../domain/task-queues';

const thisFile = platformWithApi();
test('GET /healthz answers 200 while the process lives', async () => {
  const answer = await call(thisFile.api.url, 'GET', '/healthz');
  expect(answer.status).toBe(200);
  expect(answer.body).toEqual({ status: 'ok' });
});

test('GET /readyz lists database, temporal, docker and the edge, all up', async () => {
  const answer = await call(thisFile.api.url, 'GET', '/readyz');
  expect(answer.body).toEqual({ status: 'ready', checks: { database: 'up', temporal: 'up', docker: 'up', edge: 'up' } });
  expect(answer.status).toBe(200);
});

test('GET /readyz answers 503 naming docker when the configured engine does not answer', async () => {
  const deadDocker = createDocker({ dockerHost: 'tcp://127.0.0.1:1' });
  const broken = await thisFile.platform.startApi({ docker: deadDocker });
  const answer = await call(broken.url, 'GET', '/readyz');
  expectProblem(answer, 503, 'NOT_READY');
  expect(answer.body.checks).toEqual({ database: 'up', temporal: 'up', docker: 'down', edge: 'up' });
  expect(answer.body.detail).toContain('docker');
});

test('GET /readyz answers 503 naming the edge when its admin does not answer', async () => {
  const blind = await thisFile.platform.startApi({
    config: { ...thisFile.platform.config, edge: { ...thisFile.platform.config.edge, adminUrl: 'http://127.0.0.1:1' } },
  });
  const answer = await call(blind.url, 'GET', '/readyz');
  expectProblem(answer, 503, 'NOT_READY');
  expect(answer.body.checks).toEqual({ database: 'up', temporal: 'up', docker: 'up', edge: 'down' });
  expect(answer.body.detail).toContain('edge');
});

test('GET /readyz answers from checks at most 2 s old: a burst of calls probes Docker and the database once', async () => {
  let pings = 0;
  const countedDocker = { ...thisFile.platform.docker, ping: (timeoutMs?: number) => ((pings += 1), thisFile.platform.docker.ping(timeoutMs)) };
  const countedDb = createDb({ databaseUrl: thisFile.platform.config.databaseUrl });
  let selects = 0;
  countedDb.on('query', (query: { sql: string }) => {
    if (query.sql === 'select 1') selects += 1;
  });
  try {
    const probed = await thisFile.platform.startApi({ docker: countedDocker, db: countedDb });
    const answers = await Promise.all(Array.from({ length: 30 }, () => call(probed.url, 'GET', '/readyz')));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    for (let i = 0; i < 20; i++) await call(probed.url, 'GET', '/readyz');
    expect({ pings, selects }).toEqual({ pings: 1, selects: 1 });
  } finally {
    await countedDb.destroy();
  }
});

test("GET /metrics is the ADMIN's or the internal token's (a scraper's): the edge's per-service statistics are not for anyone", async () => {
  expectProblem(await call(thisFile.api.url, 'GET', '/metrics'), 401, 'UNAUTHENTICATED');
  expectProblem(
    await call(thisFile.api.url, 'GET', '/metrics', { token: await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['s'] }) }),
    403,
    'FORBIDDEN',
  );
  expect(
    (await call(thisFile.api.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${thisFile.platform.config.secrets.internalToken}` } })).status,
  ).toBe(200);
});

test('GET /metrics serves Prometheus text with the request counter', async () => {
  await call(thisFile.api.url, 'GET', '/healthz');
  const answer = await call(thisFile.api.url, 'GET', '/metrics', { token: await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] }) });
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toContain('text/plain');
  expect(answer.text).toMatch(/opsflow_http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
  // The edge's own statistics follow: this very request went through it.
  expect(answer.text).toMatch(/^envoy_http_downstream_rq_total\{envoy_http_conn_manager_prefix="edge"\} [1-9]\d*$/m);
});

test("GET /metrics holds request durations by route and status, and the platform's own series (decision 044)", async () => {
  await call(thisFile.api.url, 'GET', '/healthz');
  const answer = await call(thisFile.api.url, 'GET', '/metrics', { token: await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] }) });
  expect(answer.text).toMatch(/opsflow_http_request_duration_seconds_bucket\{le="[^"]+",method="GET",route="\/healthz",status="200"\} \d+/);
  expect(answer.text).toMatch(/^opsflow_database_up 1$/m);
  // Temporal's view of every queue: this file runs no worker, so each has no poller.
  for (const queue of ['archival', 'messaging', 'approvals', 'deployments'])
    for (const kind of ['workflow', 'activity'])
      expect(answer.text).toMatch(new RegExp(`^opsflow_task_queue_pollers\\{task_queue="${queue}",kind="${kind}"\\} 0$`, 'm'));
  for (const series of ['opsflow_emails_last_hour', 'opsflow_deployments_last_hour', 'opsflow_job_runs_last_day', 'opsflow_approvals_waiting'])
    expect(answer.text).toContain(`# TYPE ${series} gauge`);
  // The platform's dashboard reads no series the API does not serve (a histogram by its `_bucket`).
  const dashboard = fs.readFileSync(path.join(PROJECT_ROOT, 'monitoring', 'grafana', 'platform.json'), 'utf8');
  const read = [...new Set([...dashboard.matchAll(/\bopsflow_[a-z_]+/g)].map((match) => match[0].replace(/_bucket$/, '')))];
  expect(read.length).toBeGreaterThan(8);
  expect(read.filter((series) => !answer.text.includes(`# TYPE ${series} `))).toEqual([]);
});

test("GET /metrics counts the last hour's emails by channel and status, and the last day's archive runs by log type", async () => {
  const { db } = thisFile.platform;
  await db.raw(
    `insert into email.email_log (site_id, recipient, status, channel, created_at) values
       ('m', 'a@example.test', 'SUCCESS', 'relay-a', now()), ('m', 'b@example.test', 'SUCCESS', 'relay-a', now()),
       ('m', 'c@example.test', 'FAILED', null, now())`,
  );
  // One from before the hour, when that is still this month: a month before the first has no partition here.
  await db.raw(
    `insert into email.email_log (site_id, recipient, status, channel, created_at)
       select 'm', 'd@example.test', 'SUCCESS', 'relay-a', now() - interval '2 hours'
        where date_trunc('month', (now() - interval '2 hours') at time zone 'UTC') = date_trunc('month', now() at time zone 'UTC')`,
  );
  // A run started by hand has a workflow id of its own; its label is its log type's all the same.
  await writeJobLog(db, {
    siteId: 'm',
    jobName: 'archive:EMAIL_LOG:by-hand-7',
    jobKey: `metrics-${Date.now()}`,
    status: 'FAILED',
    startedAt: new Date(),
    finishedAt: new Date(),
    rowsAffected: 0,
    message: 'the sink refused',
  });
  // Two archive files of today and one of last week: only today's count.
  const part = (partNo: number, rows: number, bytes: number, age: string) =>
    db.raw(
      `insert into settings.archive_part (workflow_id, run_id, log_type, site_id, cutoff, part_no, file_name, row_count, min_id, max_id, size_bytes, sha256, state, created_at)
         values ('archive:EMAIL_LOG:m', gen_random_uuid()::text, 'EMAIL_LOG', 'm', now(), ?, 'part.csv', ?, 1, 2, ?, 'x', 'CONFIRMED', now() - ?::interval)`,
      [partNo, rows, bytes, age],
    );
  await part(1, 1000, 30000, '1 minute');
  await part(2, 200, 4567, '2 hours');
  await part(3, 99, 99, '7 days');
  // An API of its own: its first reading is taken now, not one kept from a scrape before these rows.
  const fresh = await thisFile.platform.startApi();
  const answer = await call(fresh.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${thisFile.platform.config.secrets.internalToken}` } });
  expect(answer.text).toMatch(/^opsflow_emails_last_hour\{channel="relay-a",status="SUCCESS"\} 2$/m);
  expect(answer.text).toMatch(/^opsflow_emails_last_hour\{channel="none",status="FAILED"\} 1$/m);
  expect(answer.text).toMatch(/^opsflow_job_runs_last_day\{job_name="archive:EMAIL_LOG",outcome="FAILED"\} 1$/m);
  expect(answer.text).toMatch(/^opsflow_archived_rows_last_day\{log_type="EMAIL_LOG"\} 1200$/m);
  expect(answer.text).toMatch(/^opsflow_archived_bytes_last_day\{log_type="EMAIL_LOG"\} 34567$/m);
  expect(answer.text).not.toContain('by-hand-7');
  expect(answer.text).not.toContain('@example.test');
});

test('GET /metrics says the database is down, and still answers, when the API cannot query it', async () => {
  const cut = await thisFile.platform.startApi({ db: createDb({ databaseUrl: 'postgres://opsflow:opsflow@127.0.0.1:1/none' }) });
  const answer = await call(cut.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${thisFile.platform.config.secrets.internalToken}` } });
  expect(answer.status).toBe(200);
  expect(answer.text).toMatch(/^opsflow_database_up 0$/m);
  expect(answer.text).not.toMatch(/^opsflow_emails_last_hour\{/m);
});

test('GET /api/openapi.json documents every mounted route with its schemas', async () => {
  const answer = await call(thisFile.api.url, 'GET', '/api/openapi.json');
  expect(answer.status).toBe(200);
  expect(answer.body.openapi).toBe('3.1.0');
  expect(Object.keys(answer.body.paths)).toEqual(expect.arrayContaining(['/healthz', '/readyz', '/api/directory/users', '/api/directory/users/{id}']));
  const create = answer.body.paths['/api/directory/users'].post;
  expect(create.requestBody.content['application/json'].schema.additionalProperties).toBe(false);
  expect(create.requestBody.content['application/json'].schema.required).toEqual(expect.arrayContaining(['email', 'name']));
});

test('every answer carries a request id, and a well-formed incoming one is kept', async () => {
  const answer = await call(thisFile.api.url, 'GET', '/healthz', { headers: { 'X-Request-Id': 'trace-123' } });
  expect(answer.headers.get('x-request-id')).toBe('trace-123');
  const generated = await call(thisFile.api.url, 'GET', '/healthz', { headers: { 'X-Request-Id': 'bad id\twith tab' } });
  expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
});

test('an unknown route -> 404 problem+json NOT_FOUND', async () => {
  expectProblem(await call(thisFile.api.url, 'GET', '/api/no-such-thing'), 404, 'NOT_FOUND');
});

test('a method the route does not have -> 405 problem+json', async () => {
  expectProblem(await call(thisFile.api.url, 'PATCH', '/healthz'), 405, 'METHOD_NOT_ALLOWED');
});

test('TRACE, on a route or not -> 405 METHOD_NOT_ALLOWED, never a server error', async () => {
  // fetch refuses to send TRACE: a plain HTTP request does.
  const trace = (path: string) =>
    new Promise<{ status: number; type: string; body: { code?: string } }>((resolve, reject) => {
      const request = http.request(`${thisFile.api.url}${path}`, { method: 'TRACE' }, (answer) => {
        let text = '';
        answer.on('data', (chunk) => (text += chunk));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 0, type: String(answer.headers['content-type']), body: JSON.parse(text) }));
      });
      request.on('error', reject);
      request.end();
    });
  for (const path of ['/healthz', '/api/directory/users', '/api/workflow/approvals']) {
    const answer = await trace(path);
    expect({ path, status: answer.status, code: answer.body.code }).toEqual({ path, status: 405, code: 'METHOD_NOT_ALLOWED' });
    expect(answer.type).toContain('application/problem+json');
  }
});

test("GET /api/settings/health gives an ADMIN each task queue's pollers and backlog, and the last hour's emails; no one else", async () => {
  const admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  const answer = await call(thisFile.api.url, 'GET', '/api/settings/health', { token: admin });
  expect(answer.status).toBe(200);
  expect(answer.body.databaseUp).toBe(true);
  // This file runs no worker: every queue is there, with none polling.
  expect(answer.body.queues).toHaveLength(8);
  expect(answer.body.queues).toContainEqual({ taskQueue: 'messaging', kind: 'activity', pollers: 0, backlog: 0 });
  expect(Array.isArray(answer.body.emailsLastHour)).toBe(true);
  const manager = await thisFile.platform.token({ sub: 'max', roles: ['MANAGER'], sites: ['m'] });
  expectProblem(await call(thisFile.api.url, 'GET', '/api/settings/health', { token: manager }), 403, 'FORBIDDEN');
  expectProblem(await call(thisFile.api.url, 'GET', '/api/settings/health'), 401, 'UNAUTHENTICATED');
});

test('GET /api/settings/links names the Temporal Web UI, and no trace link when TRACES_LINK is unset', async () => {
  const viewer = await thisFile.platform.token({ sub: 'vic', roles: ['VIEWER'], sites: ['m'] });
  const answer = await call(thisFile.api.url, 'GET', '/api/settings/links', { token: viewer });
  expect(answer.body).toEqual({ temporalUi: thisFile.platform.config.temporal.uiUrl, traces: null });
});

/** The weights each task queue holds, read from Temporal itself, not through the API. */
async function weightsInTemporal(): Promise<Array<Record<string, number>>> {
  const { connection, namespace } = thisFile.platform.temporal;
  const kinds = [proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY];
  const asks = ALL_TASK_QUEUES.flatMap((name) =>
    kinds.map((taskQueueType) => connection.workflowService.describeTaskQueue({ namespace, taskQueue: { name }, taskQueueType, reportConfig: true })),
  );
  return (await Promise.all(asks)).map((described) => ({ ...described.config?.fairnessWeightOverrides }));
}

test("PUT /api/settings/fairness/{siteId} sets the site's weight in Temporal's configuration of every queue; GET reads it; DELETE takes it away", async () => {
  const admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  const set = await call(thisFile.api.url, 'PUT', '/api/settings/fairness/site-heavy', { token: admin, body: { weight: 4 } });
  expect(set.status).toBe(200);
  expect(set.body).toEqual({ fairnessKey: 'site-heavy', weight: 4, onEveryQueue: true });
  await call(thisFile.api.url, 'PUT', '/api/settings/fairness/_platform', { token: admin, body: { weight: 0.3 } });
  const held = await weightsInTemporal();
  expect(held).toHaveLength(8);
  for (const overrides of held) expect(overrides['site-heavy']).toBe(4);

  const listed = await call(thisFile.api.url, 'GET', '/api/settings/fairness', { token: admin });
  expect(listed.body).toEqual({
    defaultWeight: 1,
    items: [
      { fairnessKey: '_platform', weight: 0.3, onEveryQueue: true },
      { fairnessKey: 'site-heavy', weight: 4, onEveryQueue: true },
    ],
  });
  expect((await call(thisFile.api.url, 'DELETE', '/api/settings/fairness/site-heavy', { token: admin })).status).toBe(204);
  for (const overrides of await weightsInTemporal()) expect(overrides).toEqual({ _platform: expect.closeTo(0.3, 6) });
});

test("an EDITOR or MANAGER cannot give their own site a bigger share: 403, and Temporal's weights are unchanged", async () => {
  const before = await weightsInTemporal();
  for (const role of ['EDITOR', 'MANAGER']) {
    const member = await thisFile.platform.token({ sub: `own-${role}`, roles: [role], sites: ['greedy'] });
    expectProblem(await call(thisFile.api.url, 'PUT', '/api/settings/fairness/greedy', { token: member, body: { weight: 1000 } }), 403, 'FORBIDDEN');
    expectProblem(await call(thisFile.api.url, 'DELETE', '/api/settings/fairness/_platform', { token: member }), 403, 'FORBIDDEN');
  }
  expectProblem(await call(thisFile.api.url, 'PUT', '/api/settings/fairness/greedy', { body: { weight: 1000 } }), 401, 'UNAUTHENTICATED');
  expect(await weightsInTemporal()).toEqual(before);
});

test('a weight outside 0.001 to 1000, or a key that is not a site id -> 400 VALIDATION_FAILED, and nothing is set', async () => {
  const admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  const before = await weightsInTemporal();
  for (const weight of [0, 0.0001, 1001, -1, '2', null]) {
    expectProblem(await call(thisFile.api.url, 'PUT', '/api/settings/fairness/site-x', { token: admin, body: { weight } }), 400, 'VALIDATION_FAILED');
  }
  for (const key of ['_other', '-x', 'a%20b']) {
    expectProblem(await call(thisFile.api.url, 'PUT', `/api/settings/fairness/${key}`, { token: admin, body: { weight: 2 } }), 400, 'VALIDATION_FAILED');
  }
  expectProblem(
    await call(thisFile.api.url, 'PUT', '/api/settings/fairness/site-x', { token: admin, body: { weight: 2, extra: 1 } }),
    400,
    'VALIDATION_FAILED',
  );
  expect(await weightsInTemporal()).toEqual(before);
});
