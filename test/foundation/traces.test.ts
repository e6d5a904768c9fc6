import { attachPlatform, RunningApiProcess, TestPlatform } from '../support/platform';
import { call } from '../support/http';
import { newTraceparent, startTestJaeger, TracedSpan, traceOnceComplete } from '../support/traces';
import { publishedTemplate, smtpChannel } from '../messaging/harness';
import type { RunningJaeger } from '../../scripts/platform/jaeger';
import { buildJar, postJar } from '../deploy/jars';
import { deploymentOutcome } from '../deploy/harness';
import { waitUntil } from '../support/wait';
import { recordHistory } from '../support/histories';

/**
 * One trace from the edge to the SMTP relay: the platform runs as production runs it (Envoy in front, the API
 * and a worker as their own processes), exporting to a real Jaeger, and the trace is read back from
 * Jaeger's API. The caller sends its own trace context, as a service inside an organisation's trace does.
 */
let jaeger: RunningJaeger;
let platform: TestPlatform;
let api: RunningApiProcess;
let editor: string;
let admin: string;
let manager: string;

beforeAll(async () => {
  jaeger = await startTestJaeger();
  platform = await attachPlatform({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpUrl, LOG_LEVEL: 'info' } });
  api = await platform.startApiProcess();
  // The approvals worker calls the publish back through the edge: that call is in the trace too.
  await platform.startWorker(['messaging', 'approvals', 'deployments'], { API_INTERNAL_URL: api.url });
  admin = await platform.token({ sub: 'ada', roles: ['ADMIN'] });
  editor = await platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-t'] });
  manager = await platform.token({ sub: 'max', roles: ['MANAGER'], sites: ['site-t'] });
}, 180000);

afterAll(async () => {
  await platform?.close();
  await jaeger?.stop();
});

const named = (spans: TracedSpan[], service: string, name: string | RegExp) =>
  spans.filter((span) => span.service === service && (typeof name === 'string' ? span.name === name : name.test(span.name)));

/** Whether `span` hangs, through its parents in `spans`, from `ancestor`. */
function descends(spans: TracedSpan[], span: TracedSpan, ancestor: TracedSpan): boolean {
  const byId = new Map(spans.map((each) => [each.spanId, each]));
  for (let parent = byId.get(span.parentId ?? ''); parent; parent = byId.get(parent.parentId ?? '')) {
    if (parent.spanId === ancestor.spanId) return true;
  }
  return false;
}

/** Every activity the workflows scheduled in this trace ran in it too, each in a span of its own. */
function activitiesRan(spans: TracedSpan[]): boolean {
  const scheduled = spans.filter((span) => span.name.startsWith('StartActivity:')).map((span) => span.name.slice('StartActivity:'.length));
  return scheduled.length > 0 && scheduled.every((activity) => spans.some((span) => span.name === `RunActivity:${activity}`));
}

test("a role email sent through the edge is one trace: the edge's span, the API's, the workflow's, each activity's, PostgreSQL's and the relay's answer", async () => {
  await smtpChannel(api.url, admin, 'capture', platform.info.mail.smtpPort);
  await platform
    .db('directory.user')
    .insert(['one', 'two'].map((name) => ({ email: `${name}@traces.example`, name, locale: 'en', roles: ['MANAGER'], site_ids: ['site-t'] })));
  const templateId = await publishedTemplate(api.url, editor, 'site-t');
  const { traceId, traceparent } = newTraceparent();
  const sent = await call(api.url, 'POST', '/api/email/send/role', {
    token: editor,
    headers: { traceparent },
    body: { templateId, roleKey: 'MANAGER', siteId: 'site-t' },
  });
  expect(sent.status).toBe(202);
  await platform.temporal.client.workflow.getHandle(sent.body.workflowId).result();
  // A traced run's history: the replay test holds that the trace in its headers changes nothing on replay.
  await recordHistory(platform.temporal, { workflowId: sent.body.workflowId, name: 'email-role-traced' });

  const spans = await traceOnceComplete(
    jaeger,
    traceId,
    (now) =>
      named(now, 'opsflow-edge', /./).length > 0 &&
      named(now, 'opsflow-worker', 'smtp send').length === 2 &&
      named(now, 'opsflow-worker', /^RunWorkflow:/).length > 0 &&
      activitiesRan(now),
  );
  expect(named(spans, 'opsflow-edge', /./).length).toBeGreaterThan(0);
  expect(named(spans, 'opsflow-api', 'POST /api/email/send/role').map((span) => span.tags['span.kind'])).toEqual(['server']);
  expect(named(spans, 'opsflow-api', /^StartWorkflow:/)).toHaveLength(1);
  expect(spans.filter((span) => span.tags['db.system'] === 'postgresql').length).toBeGreaterThan(0);
  for (const smtp of named(spans, 'opsflow-worker', 'smtp send')) expect(String(smtp.tags['smtp.response'])).toMatch(/^250 /);
  // The API's line of the request names its trace.
  const accessLine = api
    .output()
    .split('\n')
    .find((line) => line.includes('"path":"/api/email/send/role"') && line.includes('"status":202'));
  expect(JSON.parse(accessLine ?? '{}')).toEqual(expect.objectContaining({ trace_id: traceId }));
  // One trace, one tree: every span but the caller's first hangs from another span of the trace.
  const ids = new Set(spans.map((span) => span.spanId));
  expect(spans.filter((span) => span.parentId !== null && !ids.has(span.parentId)).map((span) => span.name)).toEqual([expect.any(String)]);
});

test("a JAR deploy through the edge is one trace: the workflow, each activity, PostgreSQL's and the Docker engine's calls", async () => {
  const jar = await buildJar({ mainClass: 'HelloServer' });
  const { traceId, traceparent } = newTraceparent();
  const accepted = await postJar({ apiUrl: api.url, token: admin, jar, fields: { serviceName: 'traced-service', port: '8080' }, headers: { traceparent } });
  expect(accepted.status).toBe(202);
  expect(await deploymentOutcome(api.url, admin, accepted.body.deploymentId)).toEqual(expect.objectContaining({ status: 'RUNNING' }));
  await platform.temporal.client.workflow.getHandle(accepted.body.workflowId, accepted.body.runId).result();
  await recordHistory(platform.temporal, { workflowId: accepted.body.workflowId, name: 'deploy-jar-traced' });

  const spans = await traceOnceComplete(
    jaeger,
    traceId,
    (now) => named(now, 'opsflow-edge', /./).length > 0 && named(now, 'opsflow-worker', /^RunWorkflow:deployService/).length > 0 && activitiesRan(now),
  );
  expect(named(spans, 'opsflow-api', 'POST /api/infra/deploy/jar').map((span) => span.tags['span.kind'])).toEqual(['server']);
  expect(spans.filter((span) => span.service === 'opsflow-worker' && span.tags['db.system'] === 'postgresql').length).toBeGreaterThan(0);
  // The Docker engine's API, over its socket: the container's creation among them.
  const engineCalls = spans.filter(
    (span) => span.service === 'opsflow-worker' && span.tags['span.kind'] === 'client' && String(span.tags['http.target'] ?? '').includes('/containers'),
  );
  expect(engineCalls.length).toBeGreaterThan(0);
}, 300000);

test("a publish through approval is one trace across its wait: the approval decided later, the publish it makes is in the first request's trace", async () => {
  const policy = await call(api.url, 'POST', '/api/workflow/approvals/policies', {
    token: admin,
    body: { componentType: 'PAGE', enabled: true, siteId: 'site-t' },
  });
  expect(policy.status).toBe(201);
  const created = await call(api.url, 'POST', '/api/content/pages', {
    token: editor,
    body: { siteId: 'site-t', name: 'traced', slug: 'traced', title: 'v1', data: { n: 1 } },
  });
  expect(created.status).toBe(201);
  const { traceId, traceparent } = newTraceparent();
  const submitted = await call(api.url, 'POST', `/api/content/pages/${created.body.id}/publish`, {
    token: editor,
    headers: { traceparent },
    body: { comment: 'please' },
  });
  expect(submitted.status).toBe(202);
  expect(submitted.body.status).toBe('PENDING_APPROVAL');

  // Decided in a request of its own, outside the publish's trace.
  const decided = await call(api.url, 'POST', `/api/workflow/approvals/${submitted.body.correlationId}/decide`, {
    token: manager,
    body: { decision: 'APPROVED', comment: 'ok' },
  });
  expect(decided.status).toBeLessThan(300);
  await waitUntil(
    'the page published',
    async () => (await call(api.url, 'GET', `/api/content/pages/${created.body.id}`, { token: editor })).body.status === 'PUBLISHED',
    60000,
  );
  await platform.temporal.client.workflow.getHandle(submitted.body.workflowId, submitted.body.runId).result();
  await recordHistory(platform.temporal, { workflowId: submitted.body.workflowId, name: 'publish-approved-traced' });

  // After the wait: the call back that publishes reaches the API again (through the edge), inside this trace.
  const calledBack = (now: TracedSpan[]) => {
    const callback = named(now, 'opsflow-worker', 'RunActivity:deliverCallback')[0];
    return callback !== undefined && now.some((span) => span.service === 'opsflow-api' && span.tags['span.kind'] === 'server' && descends(now, span, callback));
  };
  const spans = await traceOnceComplete(
    jaeger,
    traceId,
    (now) =>
      named(now, 'opsflow-edge', /./).length > 1 &&
      named(now, 'opsflow-worker', /^RunWorkflow:publishComponent/).length > 0 &&
      activitiesRan(now) &&
      calledBack(now),
  );
  expect(named(spans, 'opsflow-api', /^POST \/api\/content\/pages\/:id\/publish/).map((span) => span.tags['span.kind'])).toEqual(['server']);
}, 180000);

test("an unsubscribe link's token reaches no span, at the edge or in the API, even inside a caller's sampled trace", async () => {
  const token = 'Zm9vYmFyYmF6cXV4.c2VjcmV0LXRva2VuLWZvci10cmFjZXM';
  const { traceId, traceparent } = newTraceparent();
  await call(api.url, 'GET', `/u/${token}`, { headers: { traceparent } });
  await call(api.url, 'GET', `/U/${token}?again=1`, { headers: { traceparent } });
  // A request after them in the same trace: once its spans are in, theirs would be too.
  await call(api.url, 'GET', '/api/directory/me', { token: editor, headers: { traceparent } });
  const spans = await traceOnceComplete(
    jaeger,
    traceId,
    (now) => named(now, 'opsflow-edge', /./).length > 0 && named(now, 'opsflow-api', /directory\/me/).length > 0,
  );
  expect(spans.filter((span) => JSON.stringify(span).includes(token.split('.')[1])).map((span) => `${span.service} ${span.name}`)).toEqual([]);
});
