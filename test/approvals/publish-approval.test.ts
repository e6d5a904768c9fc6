import http from 'node:http';
import { AddressInfo } from 'node:net';
import { platformWithApi } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { waitUntil } from '../support/wait';
import { recordHistory } from '../support/histories';
import { withOwnTemporal } from '../support/own-temporal';
import { pagesNeedApproval, REVIEW_THEN_SIGN_OFF } from './harness';

const thisFile = platformWithApi();
let admin: string;
let editor: string;
let managerA: string;
let managerB: string;
let viewer: string;

beforeAll(async () => {
  // The worker calls the approval callbacks on this test's API.
  await thisFile.platform.startWorker(['approvals'], { API_INTERNAL_URL: thisFile.api.url });
  admin = await thisFile.platform.token({ sub: 'ada', name: 'Ada Admin', roles: ['ADMIN'] });
  editor = await thisFile.platform.token({ sub: 'eda', name: 'Eda Editor', roles: ['EDITOR'], sites: ['site-a', 'site-b', 'site-c'] });
  managerA = await thisFile.platform.token({ sub: 'max', name: 'Max Manager', roles: ['MANAGER'], sites: ['site-a', 'site-c'] });
  managerB = await thisFile.platform.token({ sub: 'bea', roles: ['MANAGER'], sites: ['site-b'] });
  viewer = await thisFile.platform.token({ sub: 'vic', roles: ['VIEWER'], sites: ['site-a'] });
});

let slugs = 0;
async function newPage(siteId: string, apiUrl = thisFile.api.url) {
  const slug = `page-${++slugs}`;
  const created = await call(apiUrl, 'POST', '/api/content/pages', { token: editor, body: { siteId, name: slug, slug, title: 'v1', data: { n: 1 } } });
  expect(created.status).toBe(201);
  return { id: created.body.id as string, slug };
}

async function policy(body: Record<string, unknown>) {
  const created = await call(thisFile.api.url, 'POST', '/api/workflow/approvals/policies', {
    token: admin,
    body: { componentType: 'PAGE', enabled: true, ...body },
  });
  expect(created.status).toBe(201);
  return created.body;
}

const page = (id: string, apiUrl = thisFile.api.url) => call(apiUrl, 'GET', `/api/content/pages/${id}`, { token: editor }).then((answer) => answer.body);
const publish = (id: string, apiUrl = thisFile.api.url, token = editor) =>
  call(apiUrl, 'POST', `/api/content/pages/${id}/publish`, { token, body: { comment: 'please' } });
const decide = (correlationId: string, token: string, decision = 'APPROVED', apiUrl = thisFile.api.url) =>
  call(apiUrl, 'POST', `/api/workflow/approvals/${correlationId}/decide`, { token, body: { decision, comment: 'ok' } });
const settled = (id: string, status: string, apiUrl = thisFile.api.url) =>
  waitUntil(`page ${id} ${status}`, async () => ((await page(id, apiUrl)).status === status ? page(id, apiUrl) : null), 60000);

describe('with a site policy', () => {
  beforeAll(async () => {
    await policy({ siteId: 'site-a' });
  });

  test('publish -> 202 PENDING_APPROVAL; only managers of that site see it; approve publishes exactly the submitted revision', async () => {
    const { id, slug } = await newPage('site-a');
    const submitted = await publish(id);
    expect(submitted.status).toBe(202);
    expect(submitted.body).toEqual({
      status: 'PENDING_APPROVAL',
      correlationId: expect.any(String),
      workflowId: `publish:PAGE:${id}`,
      runId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      uiUrl: expect.stringContaining('publish%3APAGE%3A'),
    });
    const { correlationId } = submitted.body;
    expect((await page(id)).status).toBe('PENDING_APPROVAL');
    await recordHistory(thisFile.platform.temporal, { workflowId: submitted.body.workflowId, name: 'publish-waiting-for-approval' });
    const submittedRev = (await call(thisFile.api.url, 'GET', `/api/content/pages/${id}/history`, { token: editor })).body.items.find(
      (item: any) => item.status === 'DRAFT',
    ).rev;

    const queueA = await call(thisFile.api.url, 'GET', '/api/workflow/approvals?status=PENDING', { token: managerA });
    expect(queueA.body.items.map((item: any) => item.correlationId)).toContain(correlationId);
    expect(queueA.body.items.find((item: any) => item.correlationId === correlationId)).toEqual(
      expect.objectContaining({
        componentType: 'PAGE',
        siteId: 'site-a',
        resourceId: id,
        revision: submittedRev,
        requestedBy: 'eda',
        status: 'PENDING',
        comment: 'please',
      }),
    );
    // What approving would change: a first publish, so every field against nothing.
    expect(queueA.body.items.find((item: any) => item.correlationId === correlationId).comparison).toEqual({
      against: 'nothing',
      changes: expect.arrayContaining([
        { path: '/title', after: 'v1' },
        { path: '/data', after: { n: 1 } },
        { path: '/slug', after: slug },
      ]),
    });
    const one = await call(thisFile.api.url, 'GET', `/api/workflow/approvals/${correlationId}`, { token: viewer });
    expect(one.body.progress).toEqual(expect.objectContaining({ stage: 'PENDING_APPROVAL', revision: submittedRev, approvalStage: 0 }));
    const queueB = await call(thisFile.api.url, 'GET', '/api/workflow/approvals?status=PENDING', { token: managerB });
    expect(queueB.body.items.map((item: any) => item.correlationId)).not.toContain(correlationId);
    expectProblem(await call(thisFile.api.url, 'GET', '/api/workflow/approvals', { token: viewer }), 403, 'FORBIDDEN');

    // The draft moves on while the approval waits; what gets published is what was submitted.
    await call(thisFile.api.url, 'PUT', `/api/content/pages/${id}`, {
      token: editor,
      body: { name: slug, slug, title: 'v2, after submitting', data: { n: 2 } },
    });
    expectProblem(await publish(id), 409, 'APPROVAL_PENDING');
    expectProblem(await decide(correlationId, managerB), 403, 'FORBIDDEN');

    const approved = await decide(correlationId, managerA);
    expect(approved.status).toBe(200);
    expect(approved.body).toEqual(
      expect.objectContaining({ status: 'APPROVED', decisions: [expect.objectContaining({ decision: 'APPROVED', decidedBy: 'max', stage: 0 })] }),
    );
    const published = await settled(id, 'PUBLISHED');
    expect(published.publishedRev).toBe(submittedRev);
    expect(published.title).toBe('v2, after submitting');
    const served = await call(thisFile.api.url, 'GET', `/api/public/sites/site-a/pages/${slug}`);
    expect(served.body).toEqual(expect.objectContaining({ title: 'v1', data: { n: 1 }, publishedRev: submittedRev }));

    expectProblem(await decide(correlationId, managerA), 409, 'ALREADY_DECIDED');
  });

  test('the requester deciding their own request -> 403 SELF_APPROVAL_FORBIDDEN; an EDITOR deciding -> 403', async () => {
    const { id } = await newPage('site-a');
    const submitted = await publish(id, thisFile.api.url, admin);
    expect(submitted.status).toBe(202);
    expectProblem(await decide(submitted.body.correlationId, admin), 403, 'SELF_APPROVAL_FORBIDDEN');
    expectProblem(await decide(submitted.body.correlationId, editor), 403, 'FORBIDDEN');
    expect((await decide(submitted.body.correlationId, managerA, 'REJECTED')).status).toBe(200);
    await settled(id, 'REJECTED');
  });

  test('a rejection keeps the draft; it can be submitted again', async () => {
    const { id } = await newPage('site-a');
    const first = await publish(id);
    expect((await decide(first.body.correlationId, managerA, 'REJECTED')).body.status).toBe('REJECTED');
    const rejected = await settled(id, 'REJECTED');
    expect(rejected).toEqual(expect.objectContaining({ title: 'v1', publishedRev: null }));
    const again = await waitUntil('a second submission', async () => {
      const answer = await publish(id);
      return answer.status === 202 ? answer : null;
    });
    expect(again.body.correlationId).not.toBe(first.body.correlationId);
  });

  test("GET /api/workflow/approvals/mine: the caller's own requests, with their comparison; never another's, whatever the caller's role", async () => {
    const mine = await newPage('site-a');
    const submitted = (await publish(mine.id)).body;
    const other = await newPage('site-a');
    const othersRequest = (await publish(other.id, thisFile.api.url, admin)).body;
    const listed = await call(thisFile.api.url, 'GET', '/api/workflow/approvals/mine?status=PENDING', { token: editor });
    expect(listed.status).toBe(200);
    const ids = listed.body.items.map((item: any) => item.correlationId);
    expect(ids).toContain(submitted.correlationId);
    expect(ids).not.toContain(othersRequest.correlationId);
    expect(listed.body.items.every((item: any) => item.requestedBy === 'eda')).toBe(true);
    expect(listed.body.items.find((item: any) => item.correlationId === submitted.correlationId).comparison).toEqual({
      against: 'nothing',
      changes: expect.any(Array),
    });
    // A manager of the site, and an ADMIN, see only their own requests here too (the queue is where they decide).
    expect((await call(thisFile.api.url, 'GET', '/api/workflow/approvals/mine', { token: managerA })).body.items).toEqual([]);
    const adminOwn = (await call(thisFile.api.url, 'GET', '/api/workflow/approvals/mine', { token: admin })).body.items.map((item: any) => item.correlationId);
    expect(adminOwn).toContain(othersRequest.correlationId);
    expect(adminOwn).not.toContain(submitted.correlationId);
    expectProblem(await call(thisFile.api.url, 'GET', '/api/workflow/approvals/mine?status=NOPE', { token: editor }), 400, 'VALIDATION_FAILED');
    for (const correlationId of [submitted.correlationId, othersRequest.correlationId])
      expect((await decide(correlationId, managerA, 'REJECTED')).status).toBe(200);
  });

  test('#58, finding 2: a manager who wrote the revision asked for cannot approve it, though another asked; another manager can', async () => {
    const author = await thisFile.platform.token({ sub: 'mo', name: 'Mo Manager', roles: ['MANAGER', 'EDITOR'], sites: ['site-a'] });
    const drafted = await call(thisFile.api.url, 'POST', '/api/content/pages', {
      token: author,
      body: { siteId: 'site-a', name: `mos-${++slugs}`, slug: `mos-${slugs}`, title: 'by Mo', data: { n: 1 } },
    });
    expect(drafted.status).toBe(201);
    const submitted = (await publish(drafted.body.id)).body;
    expect(submitted.status).toBe('PENDING_APPROVAL');
    expectProblem(await decide(submitted.correlationId, author), 403, 'SELF_APPROVAL_FORBIDDEN');
    expect((await page(drafted.body.id)).status).toBe('PENDING_APPROVAL');
    expect((await decide(submitted.correlationId, managerA)).status).toBe(200);
    await settled(drafted.body.id, 'PUBLISHED');
  });

  test('#58, finding 7: a user who has left a site no longer sees their requests there in /mine, nor what they would change', async () => {
    const page = await newPage('site-a');
    const submitted = (await publish(page.id)).body;
    const mine = (token: string) =>
      call(thisFile.api.url, 'GET', '/api/workflow/approvals/mine?status=PENDING', { token }).then((answer) =>
        answer.body.items.map((item: any) => item.correlationId),
      );
    expect(await mine(editor)).toContain(submitted.correlationId);
    // The same user, once their token names only site-b: the request in site-a, and its diff, are not theirs to read any more.
    const movedOn = await thisFile.platform.token({ sub: 'eda', name: 'Eda Editor', roles: ['EDITOR'], sites: ['site-b'] });
    expect(await mine(movedOn)).not.toContain(submitted.correlationId);
    expect((await decide(submitted.correlationId, managerA, 'REJECTED')).status).toBe(200);
  });

  test('the queue compares a whole page of requests against what is live in a few queries, not a few per request', async () => {
    for (let i = 0; i < 8; i++) expect((await publish((await newPage('site-a')).id)).status).toBe(202);
    const count = async (work: () => Promise<unknown>) => {
      let queries = 0;
      const counter = () => queries++;
      thisFile.platform.db.on('query', counter);
      try {
        await work();
      } finally {
        thisFile.platform.db.off('query', counter);
      }
      return queries;
    };
    const page = (limit: number) => call(thisFile.api.url, 'GET', `/api/workflow/approvals?status=PENDING&limit=${limit}`, { token: managerA });
    let small: any;
    let large: any;
    const fewQueries = await count(async () => (small = await page(2)));
    const manyQueries = await count(async () => (large = await page(10)));
    expect(small.body.items).toHaveLength(2);
    expect(large.body.items.length).toBeGreaterThanOrEqual(8);
    expect(large.body.items.every((item: any) => item.comparison?.changes.length > 0)).toBe(true);
    // Five times the items, the same number of queries.
    expect(manyQueries).toBe(fewQueries);
  });
});

test('a global policy applies to a site without its own; a disabled site policy means no approval there', async () => {
  await policy({ siteId: null, componentType: 'WEB_CONTENT' });
  await policy({ siteId: 'site-b', componentType: 'WEB_CONTENT', enabled: false });
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/workflow/approvals/policies', {
      token: admin,
      body: { componentType: 'WEB_CONTENT', siteId: null, enabled: true },
    }),
    409,
    'APPROVAL_POLICY_EXISTS',
  );

  const create = async (siteId: string) =>
    (
      await call(thisFile.api.url, 'POST', '/api/content/web-content', {
        token: editor,
        body: { siteId, name: 'w', slug: `w-${siteId}`, title: 't', data: {} },
      })
    ).body.id;
  const inC = await create('site-c');
  const inB = await create('site-b');
  expect((await call(thisFile.api.url, 'POST', `/api/content/web-content/${inC}/publish`, { token: editor })).body.status).toBe('PENDING_APPROVAL');
  const direct = await call(thisFile.api.url, 'POST', `/api/content/web-content/${inB}/publish`, { token: editor });
  expect(direct.status).toBe(200);
  expect(direct.body.status).toBe('PUBLISHED');
});

test('a two-stage definition: both stages approve in order; a rejection at stage one ends it', async () => {
  await pagesNeedApproval(thisFile.api.url, admin, { siteId: 'site-c', name: 'review then sign-off', stages: REVIEW_THEN_SIGN_OFF });

  const { id } = await newPage('site-c');
  const submitted = await publish(id);
  const correlationId = submitted.body.correlationId;
  const afterReview = await decide(correlationId, managerA);
  expect(afterReview.body).toEqual(expect.objectContaining({ status: 'PENDING', currentStage: 1 }));
  expectProblem(await decide(correlationId, managerA), 403, 'FORBIDDEN');
  expect((await page(id)).status).toBe('PENDING_APPROVAL');
  expect((await decide(correlationId, admin)).body.status).toBe('APPROVED');
  await settled(id, 'PUBLISHED');
  await recordHistory(thisFile.platform.temporal, { workflowId: submitted.body.workflowId, name: 'publish-two-stages-approved' });

  const second = await newPage('site-c');
  const rejectedAtOne = await publish(second.id);
  expect((await decide(rejectedAtOne.body.correlationId, managerA, 'REJECTED')).body).toEqual(expect.objectContaining({ status: 'REJECTED', currentStage: 0 }));
  await settled(second.id, 'REJECTED');
});

test('policies: get, replace, delete; 400 for an unknown component type; 404 for an unknown definition', async () => {
  const created = await policy({ siteId: 'site-crud', componentType: 'PORTLET' });
  expect((await call(thisFile.api.url, 'GET', `/api/workflow/approvals/policies/${created.id}`, { token: admin })).body).toEqual(created);
  const replaced = await call(thisFile.api.url, 'PUT', `/api/workflow/approvals/policies/${created.id}`, {
    token: admin,
    body: { componentType: 'PORTLET', siteId: 'site-crud', enabled: false },
  });
  expect(replaced.body).toEqual(expect.objectContaining({ id: created.id, enabled: false }));
  expect((await call(thisFile.api.url, 'GET', '/api/workflow/approvals/policies', { token: admin })).body.items.map((item: any) => item.id)).toContain(
    created.id,
  );
  expectProblem(await call(thisFile.api.url, 'GET', '/api/workflow/approvals/policies', { token: managerA }), 403, 'FORBIDDEN');
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/workflow/approvals/policies', { token: admin, body: { componentType: 'POEM', siteId: null, enabled: true } }),
    400,
    'VALIDATION_FAILED',
  );
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/workflow/approvals/policies', {
      token: admin,
      body: { componentType: 'ASSET', siteId: null, enabled: true, workflowDefinitionId: '00000000-0000-4000-8000-000000000000' },
    }),
    404,
    'NOT_FOUND',
  );
  expect((await call(thisFile.api.url, 'DELETE', `/api/workflow/approvals/policies/${created.id}`, { token: admin })).status).toBe(204);
  expectProblem(await call(thisFile.api.url, 'GET', `/api/workflow/approvals/policies/${created.id}`, { token: admin }), 404, 'NOT_FOUND');
});

test('the internal submit endpoint with a policy records the approval and starts its workflow; the decision reaches the callback', async () => {
  await policy({ siteId: 'site-s', componentType: 'SOAP_COMPONENT' });
  const soap = await call(thisFile.api.url, 'POST', '/api/integration/soap-components', {
    token: admin,
    body: { siteId: 'site-s', name: 'sms', serviceUrl: 'http://127.0.0.1:9/sms', soapMethodName: 'Send', sampleRequest: '<Send/>' },
  });
  const revision = (await call(thisFile.api.url, 'GET', `/api/integration/soap-components/${soap.body.id}/history`, { token: admin })).body.items[0].rev;
  const submitted = await call(thisFile.api.url, 'POST', '/api/workflow/approvals/submit', {
    token: thisFile.platform.config.secrets.internalToken,
    body: {
      componentType: 'SOAP_COMPONENT',
      siteId: 'site-s',
      resourceId: soap.body.id,
      revision,
      callbackPath: `/api/integration/soap-components/${soap.body.id}/approval-callback`,
      requestedBy: 'eda',
    },
  });
  expect(submitted.body).toEqual({ required: true, correlationId: expect.any(String) });
  const manager = await thisFile.platform.token({ sub: 'sam', roles: ['MANAGER'], sites: ['site-s'] });
  expect((await decide(submitted.body.correlationId, manager)).body.status).toBe('APPROVED');
  const published = await waitUntil('the SOAP component published', async () => {
    const entity = (await call(thisFile.api.url, 'GET', `/api/integration/soap-components/${soap.body.id}`, { token: admin })).body;
    return entity.status === 'PUBLISHED' ? entity : null;
  });
  expect(published.publishedRev).toBe(revision);
  const history = (await call(thisFile.api.url, 'GET', `/api/integration/soap-components/${soap.body.id}/history`, { token: admin })).body.items;
  expect(history[0]).toEqual(expect.objectContaining({ status: 'PUBLISHED', userId: 'sam' }));
});

test('the internal submit endpoint takes only the internal token, and answers required: false without a policy', async () => {
  const resourceId = '00000000-0000-4000-8000-0000000000a1';
  const body = {
    componentType: 'PORTLET',
    siteId: 'site-z',
    resourceId,
    revision: 1,
    callbackPath: `/api/content/portlets/${resourceId}/approval-callback`,
    requestedBy: 'eda',
  };
  expectProblem(await call(thisFile.api.url, 'POST', '/api/workflow/approvals/submit', { token: admin, body }), 403, 'FORBIDDEN');
  const answer = await call(thisFile.api.url, 'POST', '/api/workflow/approvals/submit', { token: thisFile.platform.config.secrets.internalToken, body });
  expect(answer.status).toBe(200);
  expect(answer.body).toEqual({ required: false });
});

test('a pending approval survives restarts of the worker and the API; a callback that fails its first attempts is retried until it succeeds', async () => {
  await policy({ siteId: 'site-r', componentType: 'NAVIGATION' });
  // The worker reaches the API through a proxy that refuses the first three callbacks.
  let refused = 0;
  const proxy = http.createServer((request, response) => {
    if (request.url?.endsWith('/approval-callback') && refused < 3) {
      refused++;
      response.writeHead(503).end();
      return;
    }
    const upstream = http.request(`${thisFile.api.url}${request.url}`, { method: request.method, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  try {
    const manager = await thisFile.platform.token({ sub: 'rex', roles: ['MANAGER'], sites: ['site-r'] });
    const nav = await call(thisFile.api.url, 'POST', '/api/content/navigation', {
      token: await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-r'] }),
      body: { siteId: 'site-r', name: 'menu', slug: 'menu', title: 'Menu', data: {} },
    });
    const submitted = await call(thisFile.api.url, 'POST', `/api/content/navigation/${nav.body.id}/publish`, { token: admin });
    expect(submitted.status).toBe(202);

    const restartedWorker = await thisFile.platform.startWorker(['approvals'], { API_INTERNAL_URL: proxyUrl });
    await Promise.all(
      thisFile.platform
        .runningWorkers()
        .filter((worker) => worker !== restartedWorker)
        .map((worker) => worker.kill()),
    );
    await thisFile.restartApi();

    expect((await decide(submitted.body.correlationId, manager)).status).toBe(200);
    const published = await waitUntil('the navigation published', async () => {
      const entity = (await call(thisFile.api.url, 'GET', `/api/content/navigation/${nav.body.id}`, { token: admin })).body;
      return entity.status === 'PUBLISHED' ? entity : null;
    });
    expect(refused).toBe(3);
    expect(published.publishedRev).toBeGreaterThan(0);
  } finally {
    proxy.close();
  }
});

test('a pending approval survives a restart of the Temporal dev server that keeps its database file', async () => {
  await withOwnTemporal(thisFile.platform, ['approvals'], async (own) => {
    await policy({ siteId: 'site-t', componentType: 'PORTLET' });
    const manager = await thisFile.platform.token({ sub: 'tim', roles: ['MANAGER'], sites: ['site-t'] });
    const portlet = await call(own.api.url, 'POST', '/api/content/portlets', {
      token: admin,
      body: { siteId: 'site-t', name: 'clock', slug: 'clock', title: 'Clock', data: {} },
    });
    const submitted = await call(own.api.url, 'POST', `/api/content/portlets/${portlet.body.id}/publish`, { token: admin });
    expect(submitted.status).toBe(202);

    await own.restartTemporal();

    const decided = await waitUntil('the decide endpoint after the restart', async () => {
      const answer = await decide(submitted.body.correlationId, manager, 'APPROVED', own.api.url);
      return answer.status === 200 ? answer : null;
    });
    expect(decided.body.status).toBe('APPROVED');
    const published = await waitUntil('the portlet published', async () => {
      const entity = (await call(own.api.url, 'GET', `/api/content/portlets/${portlet.body.id}`, { token: admin })).body;
      return entity.status === 'PUBLISHED' ? entity : null;
    });
    const outcome = await own.temporal.client.workflow.getHandle(submitted.body.workflowId).result();
    expect(outcome).toEqual(expect.objectContaining({ stage: 'PUBLISHED' }));
    expect(published.publishedRev).toBe(outcome.revision);
  });
});
