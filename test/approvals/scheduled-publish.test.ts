import { WorkflowUpdateFailedError } from '@temporalio/client';
import { withOwnTemporal } from '../support/own-temporal';
import { platformWithApi, RunningWorker } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { waitUntil } from '../support/wait';
import { recordHistory } from '../support/histories';
import { cancelScheduleUpdate } from '../../workflows/approvals/definitions';
import { requireApproval } from './harness';
import { rejectionOf } from '../support/failures';

const thisFile = platformWithApi();
let worker: RunningWorker;
let admin: string;
let editor: string;
let manager: string;

beforeAll(async () => {
  worker = await thisFile.platform.startWorker(['approvals'], { API_INTERNAL_URL: thisFile.api.url });
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  editor = await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-s', 'site-p'] });
  manager = await thisFile.platform.token({ sub: 'max', roles: ['MANAGER'], sites: ['site-p'] });
  // site-p publishes through a manager's approval; site-s publishes straight away.
  await requireApproval(thisFile.api.url, admin, { componentType: 'PAGE', siteId: 'site-p', enabled: true });
});

let slugs = 0;
async function newPage(siteId: string): Promise<string> {
  const slug = `scheduled-${++slugs}`;
  const created = await call(thisFile.api.url, 'POST', '/api/content/pages', {
    token: editor,
    body: { siteId, name: slug, slug, title: 'v1', data: { n: 1 } },
  });
  expect(created.status).toBe(201);
  return created.body.id;
}

const RUN_ID = expect.stringMatching(/^[0-9a-f-]{36}$/);
const secondsAhead = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString();
/** The editor asks for the page to be published `seconds` from now: the time asked for and the answer. */
async function publishIn(id: string, seconds: number) {
  const dueAt = secondsAhead(seconds);
  const answer = await call(thisFile.api.url, 'POST', `/api/content/pages/${id}/publish`, { token: editor, body: { publishAt: dueAt } });
  return { dueAt, answer };
}
/** Until two seconds past `dueAt`: time for a run that should not publish to have done so. */
const pastDue = (dueAt: string) => new Promise((resolve) => setTimeout(resolve, Date.parse(dueAt) - Date.now() + 2000));
const latestRev = async (id: string): Promise<number> =>
  (await call(thisFile.api.url, 'GET', `/api/content/pages/${id}/history`, { token: editor })).body.items[0].rev;
const page = async (id: string) => (await call(thisFile.api.url, 'GET', `/api/content/pages/${id}`, { token: editor })).body;
const edit = (id: string, title: string) =>
  call(thisFile.api.url, 'PUT', `/api/content/pages/${id}`, {
    token: editor,
    body: { name: `n-${title}`, slug: `s-${id.slice(0, 8)}`, title, data: { title } },
  });
const scheduled = async (siteId: string) =>
  (await call(thisFile.api.url, 'GET', `/api/workflow/scheduled?siteId=${siteId}`, { token: editor })).body.items as Array<Record<string, unknown>>;
const jobLog = async (key: string) => thisFile.platform.db('settings.scheduler_job_log').where({ job_key: key }).first();

/** The moment the page was published, as the platform stamped it. */
async function publishedAtOf(id: string, waitMs: number): Promise<number> {
  const published = await waitUntil(
    `page ${id} published`,
    async () => {
      const current = await page(id);
      return current.status === 'PUBLISHED' ? current : null;
    },
    waitMs,
  );
  return Date.parse(published.publishedAt);
}

test('publishAt 5 s ahead publishes exactly the submitted revision at that time (within 2 s), not before; it is listed until then and leaves a job-log row', async () => {
  const id = await newPage('site-s');
  const submittedRev = await latestRev(id);
  const { dueAt, answer } = await publishIn(id, 5);
  expect(answer.status).toBe(202);
  expect(answer.body).toEqual({
    status: 'SCHEDULED',
    action: 'PUBLISH',
    dueAt,
    revision: submittedRev,
    workflowId: `publish:PAGE:${id}`,
    runId: RUN_ID,
    uiUrl: expect.stringContaining(answer.body.runId),
  });
  expect(await scheduled('site-s')).toEqual([
    expect.objectContaining({
      componentType: 'PAGE',
      collection: '/api/content/pages',
      id,
      action: 'PUBLISH',
      revision: submittedRev,
      dueAt,
      requestedBy: 'eda',
      runId: answer.body.runId,
    }),
  ]);
  // A second schedule of the same page waits for this one.
  expectProblem(
    await call(thisFile.api.url, 'POST', `/api/content/pages/${id}/publish`, { token: editor, body: { publishAt: secondsAhead(30) } }),
    409,
    'CHANGE_SCHEDULED',
  );

  // The draft moves on; what publishes is the revision submitted.
  expect((await edit(id, 'edited after scheduling')).status).toBe(200);
  expect((await page(id)).status).toBe('DRAFT');

  const publishedAt = await publishedAtOf(id, 15000);
  expect(publishedAt).toBeGreaterThanOrEqual(Date.parse(dueAt));
  expect(publishedAt - Date.parse(dueAt)).toBeLessThanOrEqual(2000);
  expect((await page(id)).publishedRev).toBe(submittedRev);
  expect(await latestRev(id)).toBeGreaterThan(submittedRev);
  expect((await page(id)).title).toBe('edited after scheduling');

  expect(await scheduled('site-s')).toEqual([]);
  const logged = await waitUntil('the job-log row', () => jobLog(answer.body.runId));
  expect(logged).toEqual(expect.objectContaining({ site_id: 'site-s', job_name: 'scheduled-publish', status: 'SUCCESS', rows_affected: 1 }));
  await recordHistory(thisFile.platform.temporal, { workflowId: answer.body.workflowId, runId: answer.body.runId, name: 'publish-scheduled-published' });
});

test('with an approval: approved before its time, it publishes at its time; a restart of the approvals worker in between changes nothing', async () => {
  const id = await newPage('site-p');
  const submittedRev = await latestRev(id);
  // Time enough for the restart below to end before the due time (a loaded machine once took more than 8 s).
  const { dueAt, answer } = await publishIn(id, 20);
  expect(answer.status).toBe(202);
  expect(answer.body).toEqual(expect.objectContaining({ status: 'PENDING_APPROVAL', publishAt: dueAt, correlationId: expect.any(String) }));
  // Waiting for its approval, it is not cancelled from here: a manager rejects it.
  expectProblem(await call(thisFile.api.url, 'DELETE', `/api/content/pages/${id}/schedule`, { token: editor }), 409, 'APPROVAL_PENDING');

  const decided = await call(thisFile.api.url, 'POST', `/api/workflow/approvals/${answer.body.correlationId}/decide`, {
    token: manager,
    body: { decision: 'APPROVED' },
  });
  expect(decided.status).toBe(200);
  expect((await page(id)).status).toBe('PENDING_APPROVAL');

  await worker.stop();
  worker = await thisFile.platform.startWorker(['approvals'], { API_INTERNAL_URL: thisFile.api.url });
  // The restart is in between: the new worker runs before the due time (else "at its time" would measure the restart).
  expect({ restartedBeforeDue: Date.now() < Date.parse(dueAt) }).toEqual({ restartedBeforeDue: true });

  const publishedAt = await publishedAtOf(id, 30000);
  expect(publishedAt).toBeGreaterThanOrEqual(Date.parse(dueAt));
  expect(publishedAt - Date.parse(dueAt)).toBeLessThanOrEqual(2000);
  expect((await page(id)).publishedRev).toBe(submittedRev);
  await recordHistory(thisFile.platform.temporal, { workflowId: answer.body.workflowId, runId: answer.body.runId, name: 'publish-scheduled-approved-early' });
});

test('a cancel before its time stops it: nothing is published, the job log says who cancelled, a second cancel finds nothing', async () => {
  const id = await newPage('site-s');
  // 8 s: the run takes the publish two seconds before its time (decision 008), so the cancel has six.
  const { dueAt, answer } = await publishIn(id, 8);
  expect(answer.status).toBe(202);

  const cancelled = await call(thisFile.api.url, 'DELETE', `/api/content/pages/${id}/schedule`, { token: editor });
  expect(cancelled.status).toBe(200);
  expect(cancelled.body).toEqual(
    expect.objectContaining({ status: 'CANCELLED', action: 'PUBLISH', dueAt, workflowId: answer.body.workflowId, runId: answer.body.runId }),
  );
  expect(await scheduled('site-s')).toEqual([]);
  expectProblem(await call(thisFile.api.url, 'DELETE', `/api/content/pages/${id}/schedule`, { token: editor }), 404, 'NOT_FOUND');

  await pastDue(dueAt);
  expect((await page(id)).status).toBe('DRAFT');
  expect(await jobLog(answer.body.runId)).toEqual(expect.objectContaining({ status: 'SKIPPED', message: expect.stringContaining('cancelled by eda') }));
});

test('approved, then cancelled before its time: nothing is published, the entity is a draft again, and the approval stays on record', async () => {
  const id = await newPage('site-p');
  const { dueAt, answer } = await publishIn(id, 6);
  expect(answer.status).toBe(202);
  expect(
    (await call(thisFile.api.url, 'POST', `/api/workflow/approvals/${answer.body.correlationId}/decide`, { token: manager, body: { decision: 'APPROVED' } }))
      .status,
  ).toBe(200);
  const cancelled = await waitUntil('the cancel once the run waits for its time', async () => {
    const attempt = await call(thisFile.api.url, 'DELETE', `/api/content/pages/${id}/schedule`, { token: editor });
    return attempt.status === 200 ? attempt : null;
  });
  expect(cancelled.body).toEqual(expect.objectContaining({ status: 'CANCELLED', action: 'PUBLISH' }));
  expect((await page(id)).status).toBe('DRAFT');
  await pastDue(dueAt);
  expect(await page(id)).toEqual(expect.objectContaining({ status: 'DRAFT', publishedRev: null }));
  const approval = await call(thisFile.api.url, 'GET', `/api/workflow/approvals/${answer.body.correlationId}`, { token: manager });
  expect(approval.body.status).toBe('APPROVED');
  expect(await jobLog(answer.body.runId)).toEqual(expect.objectContaining({ status: 'SKIPPED', message: expect.stringContaining('cancelled by eda') }));
});

test('a cancel sent straight to Temporal, with no cancel recorded by the platform, changes nothing: the page still publishes at its time', async () => {
  const id = await newPage('site-s');
  // 8 s: the forged cancel must reach the run before it wakes, two seconds before its time (decision 008).
  const { dueAt, answer } = await publishIn(id, 8);
  expect(answer.status).toBe(202);

  const forged = await rejectionOf(thisFile.platform.temporal.client.workflow.getHandle(answer.body.workflowId).executeUpdate(cancelScheduleUpdate));
  expect(forged).toBeInstanceOf(WorkflowUpdateFailedError);
  expect(JSON.stringify((forged as Error).cause)).toContain('CANCEL_NOT_RECORDED');

  const publishedAt = await publishedAtOf(id, 15000);
  expect(publishedAt).toBeGreaterThanOrEqual(Date.parse(dueAt));
});

test('archiveAt archives a published page at its time', async () => {
  const id = await newPage('site-s');
  expect((await call(thisFile.api.url, 'POST', `/api/content/pages/${id}/publish`, { token: editor, body: {} })).status).toBe(200);
  const dueAt = secondsAhead(3);
  const answer = await call(thisFile.api.url, 'POST', `/api/content/pages/${id}/archive`, { token: editor, body: { archiveAt: dueAt } });
  expect(answer.status).toBe(202);
  expect(answer.body).toEqual(expect.objectContaining({ status: 'SCHEDULED', action: 'ARCHIVE', dueAt }));
  expect(answer.body.revision).toBeUndefined();
  expect((await page(id)).status).toBe('PUBLISHED');
  const archived = await waitUntil('the page archived', async () => ((await page(id)).status === 'ARCHIVED' ? true : null), 15000);
  expect(archived).toBe(true);
  expect(await waitUntil('the job-log row', () => jobLog(answer.body.runId))).toEqual(
    expect.objectContaining({ job_name: 'scheduled-archive', status: 'SUCCESS' }),
  );
  // A workflow of its own since the publish run was split by purpose; the old runs archive as before.
  const run = await thisFile.platform.temporal.client.workflow.getHandle(answer.body.workflowId, answer.body.runId).describe();
  expect(run.type).toBe('archiveComponent');
  await recordHistory(thisFile.platform.temporal, { workflowId: answer.body.workflowId, runId: answer.body.runId, name: 'archive-component-archived' });
});

test('a time in the past, more than a year ahead, or not a time -> 400 VALIDATION_FAILED, and nothing is scheduled', async () => {
  const id = await newPage('site-s');
  for (const publishAt of [
    new Date(Date.now() - 1000).toISOString(),
    new Date(Date.now() + 400 * 86400000).toISOString(),
    'tomorrow',
    '2026-13-45T99:00:00Z',
  ]) {
    expectProblem(await call(thisFile.api.url, 'POST', `/api/content/pages/${id}/publish`, { token: editor, body: { publishAt } }), 400, 'VALIDATION_FAILED');
  }
  expectProblem(
    await call(thisFile.api.url, 'POST', `/api/content/pages/${id}/archive`, { token: editor, body: { archiveAt: 'soon' } }),
    400,
    'VALIDATION_FAILED',
  );
  expect(await scheduled('site-s')).toEqual([]);
  expect((await page(id)).status).toBe('DRAFT');
  // Only members of a site see what is scheduled there.
  const outsider = await thisFile.platform.token({ sub: 'out', roles: ['EDITOR'], sites: ['site-q'] });
  expectProblem(await call(thisFile.api.url, 'GET', '/api/workflow/scheduled?siteId=site-s', { token: outsider }), 403, 'FORBIDDEN');
});

test('a scheduled publish survives a restart of the Temporal dev server that keeps its database file: it publishes the submitted revision, not before its time', async () => {
  await withOwnTemporal(thisFile.platform, ['approvals'], async (own) => {
    const created = await call(own.api.url, 'POST', '/api/content/pages', {
      token: editor,
      body: { siteId: 'site-s', name: 'restart', slug: 'restart', title: 'v1', data: {} },
    });
    const submittedRev = await latestRev(created.body.id);
    const dueAt = secondsAhead(8);
    const answer = await call(own.api.url, 'POST', `/api/content/pages/${created.body.id}/publish`, { token: editor, body: { publishAt: dueAt } });
    expect(answer.status).toBe(202);

    await own.restartTemporal();

    const publishedAt = await publishedAtOf(created.body.id, 60000);
    expect(publishedAt).toBeGreaterThanOrEqual(Date.parse(dueAt));
    expect((await page(created.body.id)).publishedRev).toBe(submittedRev);
  });
});

test("each scheduled change says whether the caller may cancel it: an approval chain's is an ADMIN's, not an EDITOR's", async () => {
  const definition = await call(thisFile.api.url, 'POST', '/api/workflow/definitions', {
    token: admin,
    body: { siteId: 'site-s', name: 'chain-to-archive', stages: [{ name: 'one', role: 'MANAGER' }] },
  });
  expect(definition.status).toBe(201);
  const id = definition.body.id as string;
  const archiving = await call(thisFile.api.url, 'POST', `/api/workflow/definitions/${id}/archive`, { token: admin, body: { archiveAt: secondsAhead(3600) } });
  expect(archiving.status).toBe(202);
  const pageId = await newPage('site-s');
  expect((await publishIn(pageId, 3600)).answer.status).toBe(202);
  const seenBy = async (token: string) =>
    Object.fromEntries(
      ((await call(thisFile.api.url, 'GET', '/api/workflow/scheduled?siteId=site-s', { token })).body.items as Array<{ id: string; canCancel: boolean }>)
        .filter((change) => change.id === id || change.id === pageId)
        .map((change) => [change.id, change.canCancel]),
    );
  expect(await seenBy(editor)).toEqual({ [id]: false, [pageId]: true });
  expect(await seenBy(admin)).toEqual({ [id]: true, [pageId]: true });
  expectProblem(await call(thisFile.api.url, 'DELETE', `/api/workflow/definitions/${id}/schedule`, { token: editor }), 403, 'FORBIDDEN');
  for (const [path, token] of [
    [`/api/workflow/definitions/${id}/schedule`, admin],
    [`/api/content/pages/${pageId}/schedule`, editor],
  ] as const)
    expect((await call(thisFile.api.url, 'DELETE', path, { token })).status).toBe(200);
});
