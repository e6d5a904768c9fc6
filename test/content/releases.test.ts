import { platformWithApi } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { waitUntil } from '../support/wait';
import { requireApproval } from '../approvals/harness';

/**
 * Releases: a named set of items of any types, each at a chosen revision, published together in one
 * transaction or not at all; now, at a set time, or through one approval for the whole release.
 */
const thisFile = platformWithApi();
let admin: string;
let editor: string;
let manager: string;
let otherManager: string;
const OPEN_SITE = 'site-rel';
const GATED_SITE = 'site-rel-gated';

beforeAll(async () => {
  await thisFile.platform.startWorker(['approvals'], { API_INTERNAL_URL: thisFile.api.url });
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  editor = await thisFile.platform.token({ sub: 'eda', name: 'Eda Editor', roles: ['EDITOR'], sites: [OPEN_SITE, GATED_SITE] });
  manager = await thisFile.platform.token({ sub: 'max', name: 'Max Manager', roles: ['MANAGER'], sites: [GATED_SITE] });
  otherManager = await thisFile.platform.token({ sub: 'mia', name: 'Mia Manager', roles: ['MANAGER', 'EDITOR'], sites: [GATED_SITE] });
  // Only pages need approval in the gated site: a release holding a page needs it as a whole.
  await requireApproval(thisFile.api.url, admin, { componentType: 'PAGE', siteId: GATED_SITE, enabled: true });
});

const api = (method: string, path: string, token: string, body?: unknown) => call(thisFile.api.url, method, path, { token, body });
const RELEASES = '/api/content/releases';
let made = 0;

/** A page, a web content item and an email template of the site, each with two revisions: their ids and first revisions. */
async function threeItems(siteId: string) {
  const n = ++made;
  const items: Array<{ type: string; collection: string; id: string; first: number }> = [];
  for (const [type, collection, body] of [
    ['PAGE', '/api/content/pages', { name: `page-${n}`, slug: `page-${n}`, title: 'Page one', data: { heading: { en: 'One', ar: 'واحد' } } }],
    ['WEB_CONTENT', '/api/content/web-content', { name: `web-${n}`, slug: `web-${n}`, title: 'Web one', data: {} }],
    [
      'EMAIL_TEMPLATE',
      '/api/email/templates',
      { name: `mail-${n}`, roleKey: null, subjectEn: 'One', bodyEn: '<p>1</p>', subjectAr: 'واحد', bodyAr: '<p>١</p>' },
    ],
  ] as const) {
    const created = await api('POST', collection, editor, { siteId, ...body });
    expect(created.status).toBe(201);
    const first = (await api('GET', `${collection}/${created.body.id}/history`, editor)).body.items[0].rev as number;
    // A second revision: the release names the first, so the draft moving on changes nothing of it.
    const second = 'title' in body ? { ...body, title: 'Two' } : { ...body, subjectEn: 'Two' };
    expect((await api('PUT', `${collection}/${created.body.id}`, editor, second)).status).toBe(200);
    items.push({ type, collection, id: created.body.id, first });
  }
  return items;
}

async function releaseOf(siteId: string, items: Array<{ type: string; id: string; first: number }>) {
  const created = await api('POST', RELEASES, editor, { name: `release ${++made}`, siteId });
  expect(created.status).toBe(201);
  for (const item of items) {
    const added = await api('POST', `${RELEASES}/${created.body.id}/items`, editor, { type: item.type, id: item.id, revision: item.first });
    expect(added.status).toBe(201);
  }
  return created.body.id as string;
}

test('published now: every item at its chosen revision, in one transaction (one publish time for all three)', async () => {
  const items = await threeItems(OPEN_SITE);
  const id = await releaseOf(OPEN_SITE, items);
  const published = await api('POST', `${RELEASES}/${id}/publish`, editor, {});
  expect(published.status).toBe(200);
  expect(published.body).toEqual(expect.objectContaining({ status: 'PUBLISHED', version: 4 }));
  const states = await Promise.all(items.map(async (item) => (await api('GET', `${item.collection}/${item.id}`, editor)).body));
  expect(states.map((state) => [state.status, state.publishedRev])).toEqual(items.map((item) => ['PUBLISHED', item.first]));
  // now() is the transaction's start: one transaction stamps one time on every item.
  expect(new Set(states.map((state) => state.publishedAt)).size).toBe(1);
  const release = (await api('GET', `${RELEASES}/${id}`, editor)).body;
  expect(release).toEqual(expect.objectContaining({ status: 'PUBLISHED', itemCount: 3, failure: null, publishedBy: 'eda' }));
  expect(release.items.map((item: { type: string; revision: number }) => [item.type, item.revision])).toEqual(items.map((item) => [item.type, item.first]));
  // Published, it is locked.
  expectProblem(await api('POST', `${RELEASES}/${id}/items`, editor, { type: 'PAGE', id: items[0].id }), 409, 'RELEASE_LOCKED');
});

test('an item deleted since it was added: nothing is published, and the answer names the item and why', async () => {
  const items = await threeItems(OPEN_SITE);
  const id = await releaseOf(OPEN_SITE, items);
  const gone = items[1];
  expect((await api('DELETE', `${gone.collection}/${gone.id}`, editor)).status).toBe(204);
  const refused = await api('POST', `${RELEASES}/${id}/publish`, editor, {});
  expectProblem(refused, 409, 'RELEASE_FAILED');
  expect(refused.body.detail).toContain(`WEB_CONTENT ${gone.id}: was deleted`);
  const release = (await api('GET', `${RELEASES}/${id}`, editor)).body;
  expect(release.status).toBe('FAILED');
  expect(release.failure).toEqual([expect.objectContaining({ itemId: release.items[1].id, componentId: gone.id, reason: 'ITEM_DELETED' })]);
  for (const item of [items[0], items[2]]) {
    const state = (await api('GET', `${item.collection}/${item.id}`, editor)).body;
    expect([state.status, state.publishedRev]).toEqual(['DRAFT', null]);
  }
  // Mended (the item taken out), it publishes.
  expect((await api('DELETE', `${RELEASES}/${id}/items/${release.items[1].id}`, editor)).status).toBe(204);
  expect((await api('POST', `${RELEASES}/${id}/publish`, editor, {})).status).toBe(200);
});

test('approved by a manager as a whole, it publishes all three at its time; the requester cannot decide it', async () => {
  const items = await threeItems(GATED_SITE);
  const id = await releaseOf(GATED_SITE, items);
  const dueAt = new Date(Math.ceil(Date.now() / 1000) * 1000 + 10000).toISOString();
  const scheduled = await api('POST', `${RELEASES}/${id}/schedule`, editor, { at: dueAt });
  expect(scheduled.status).toBe(202);
  expect(scheduled.body).toEqual(expect.objectContaining({ status: 'PENDING_APPROVAL', publishAt: dueAt }));
  const { correlationId } = scheduled.body;
  // One approval request for the release, in the queue like any other; its items wait.
  const queued = (await api('GET', '/api/workflow/approvals?status=PENDING', manager)).body.items;
  expect(queued.filter((approval: { componentType: string; resourceId: string }) => approval.resourceId === id)).toEqual([
    expect.objectContaining({ componentType: 'RELEASE', correlationId }),
  ]);
  expectProblem(await api('POST', `${RELEASES}/${id}/items`, editor, { type: 'PAGE', id: items[0].id }), 409, 'RELEASE_LOCKED');
  expectProblem(await api('POST', `/api/workflow/approvals/${correlationId}/decide`, editor, { decision: 'APPROVED' }), 403, 'SELF_APPROVAL_FORBIDDEN');
  const decided = await api('POST', `/api/workflow/approvals/${correlationId}/decide`, manager, { decision: 'APPROVED', comment: 'all three' });
  expect(decided.status).toBe(200);

  const release = await waitUntil('the release published', async () => {
    const now = (await api('GET', `${RELEASES}/${id}`, editor)).body;
    return now.status === 'PUBLISHED' ? now : null;
  });
  const late = Date.parse(release.publishedAt) - Date.parse(dueAt);
  expect(late).toBeGreaterThanOrEqual(0);
  expect(late).toBeLessThanOrEqual(1000);
  const states = await Promise.all(items.map(async (item) => (await api('GET', `${item.collection}/${item.id}`, editor)).body));
  expect(states.map((state) => [state.status, state.publishedRev, state.publishedAt])).toEqual(
    items.map((item) => ['PUBLISHED', item.first, release.publishedAt]),
  );
  expect(release.publishedBy).toBe('max');
});

test("#58, finding 2: a manager who wrote an item's revision cannot approve the release that holds it; another manager can", async () => {
  const drafted = await api('POST', '/api/content/pages', otherManager, {
    siteId: GATED_SITE,
    name: `mias-${++made}`,
    slug: `mias-${made}`,
    title: "Mia's page",
    data: {},
  });
  expect(drafted.status).toBe(201);
  const miasRevision = (await api('GET', `/api/content/pages/${drafted.body.id}/history`, editor)).body.items[0].rev as number;
  const [, web] = await threeItems(GATED_SITE);
  const id = await releaseOf(GATED_SITE, [{ type: 'PAGE', id: drafted.body.id, first: miasRevision }, web]);
  const pending = await api('POST', `${RELEASES}/${id}/publish`, editor, {});
  expect(pending.status).toBe(202);
  const decide = (token: string) => api('POST', `/api/workflow/approvals/${pending.body.correlationId}/decide`, token, { decision: 'APPROVED' });
  expectProblem(await decide(otherManager), 403, 'SELF_APPROVAL_FORBIDDEN');
  expect((await api('GET', `${RELEASES}/${id}`, editor)).body.status).toBe('PENDING_APPROVAL');
  expect((await decide(manager)).status).toBe(200);
  await waitUntil('the release published', async () => (await api('GET', `${RELEASES}/${id}`, editor)).body.status === 'PUBLISHED');
});

test('rejected as a whole: nothing is published, and the release can be mended and submitted again', async () => {
  const items = await threeItems(GATED_SITE);
  const id = await releaseOf(GATED_SITE, items);
  const pending = await api('POST', `${RELEASES}/${id}/publish`, editor, {});
  expect(pending.status).toBe(202);
  expectProblem(await api('POST', `${RELEASES}/${id}/publish`, editor, {}), 409, 'APPROVAL_PENDING');
  expect((await api('POST', `/api/workflow/approvals/${pending.body.correlationId}/decide`, otherManager, { decision: 'REJECTED' })).status).toBe(200);
  await waitUntil('the release rejected', async () => (await api('GET', `${RELEASES}/${id}`, editor)).body.status === 'REJECTED');
  for (const item of items) expect((await api('GET', `${item.collection}/${item.id}`, editor)).body.publishedRev).toBeNull();
});

test('without a page, the gated site publishes at once; a schedule can be cancelled and publishes nothing', async () => {
  const [, web, mail] = await threeItems(GATED_SITE);
  const id = await releaseOf(GATED_SITE, [web, mail]);
  const scheduled = await api('POST', `${RELEASES}/${id}/schedule`, editor, { at: new Date(Date.now() + 3600_000).toISOString() });
  expect(scheduled.status).toBe(202);
  expect(scheduled.body.status).toBe('SCHEDULED');
  expect((await api('GET', `${RELEASES}/${id}`, editor)).body.status).toBe('SCHEDULED');
  expectProblem(await api('POST', `${RELEASES}/${id}/items`, editor, { type: 'PAGE', id: web.id }), 404, 'NOT_FOUND');
  expectProblem(await api('POST', `${RELEASES}/${id}/items`, editor, { type: 'WEB_CONTENT', id: web.id }), 409, 'CHANGE_SCHEDULED');
  const listed = (await api('GET', `/api/workflow/scheduled?siteId=${GATED_SITE}`, editor)).body.items;
  expect(listed.filter((change: { id: string }) => change.id === id)).toEqual([expect.objectContaining({ componentType: 'RELEASE', collection: RELEASES })]);
  const cancelled = await api('POST', `${RELEASES}/${id}/cancel`, editor);
  expect(cancelled.status).toBe(200);
  expect(cancelled.body.status).toBe('CANCELLED');
  expect((await api('GET', `${RELEASES}/${id}`, editor)).body.status).toBe('OPEN');
  expect((await api('POST', `${RELEASES}/${id}/publish`, editor, {})).status).toBe(200);
});

test("doors: an item of another site, an ADMIN-only type, another site's release, an empty release and a forged callback are refused", async () => {
  const [page] = await threeItems(OPEN_SITE);
  const id = await releaseOf(GATED_SITE, []);
  expectProblem(await api('POST', `${RELEASES}/${id}/items`, editor, { type: 'PAGE', id: page.id }), 404, 'NOT_FOUND');
  expectProblem(await api('POST', `${RELEASES}/${id}/publish`, editor, {}), 409, 'RELEASE_FAILED');
  const definition = await api('POST', '/api/workflow/definitions', admin, { siteId: GATED_SITE, name: 'chain', stages: [{ name: 'one', role: 'MANAGER' }] });
  expectProblem(await api('POST', `${RELEASES}/${id}/items`, editor, { type: 'WORKFLOW_DEFINITION', id: definition.body.id }), 403, 'FORBIDDEN');
  const outsider = await thisFile.platform.token({ sub: 'oz', roles: ['EDITOR'], sites: ['site-elsewhere'] });
  expectProblem(await api('GET', `${RELEASES}/${id}`, outsider), 403, 'FORBIDDEN');
  expectProblem(await api('POST', RELEASES, outsider, { name: 'mine', siteId: GATED_SITE }), 403, 'FORBIDDEN');
  // The internal token is not a licence to publish: a callback naming no approval of this release changes nothing.
  const forged = await call(thisFile.api.url, 'POST', `${RELEASES}/${id}/approval-callback`, {
    headers: { authorization: `Bearer ${thisFile.platform.config.secrets.internalToken}` },
    body: { decision: 'APPROVED', revision: 1, correlationId: '00000000-0000-4000-8000-000000000000' },
  });
  expectProblem(forged, 409, 'APPROVAL_MISMATCH');
});

test("an older approval's callback, replayed while a newer approval is open, changes nothing: the release stays locked", async () => {
  const items = await threeItems(GATED_SITE);
  const id = await releaseOf(GATED_SITE, items);
  const first = await api('POST', `${RELEASES}/${id}/publish`, editor, {});
  expect((await api('POST', `/api/workflow/approvals/${first.body.correlationId}/decide`, manager, { decision: 'REJECTED' })).status).toBe(200);
  await waitUntil('the first request rejected', async () => (await api('GET', `${RELEASES}/${id}`, editor)).body.status === 'REJECTED');
  // At once: the first run may still be closing its approval (a fresh-clone run met it with 409 once).
  const second = await api('POST', `${RELEASES}/${id}/publish`, editor, {});
  expect({ status: second.status, body: second.status === 202 ? 'accepted' : second.body }).toEqual({ status: 202, body: 'accepted' });
  const { version } = (await api('GET', `${RELEASES}/${id}`, editor)).body;
  const replayed = await call(thisFile.api.url, 'POST', `${RELEASES}/${id}/approval-callback`, {
    headers: { authorization: `Bearer ${thisFile.platform.config.secrets.internalToken}` },
    body: { decision: 'REJECTED', revision: version, correlationId: first.body.correlationId },
  });
  expect(replayed.status).toBe(200);
  expect(replayed.body.status).toBe('PENDING_APPROVAL');
  expectProblem(await api('POST', `${RELEASES}/${id}/items`, editor, { type: 'PAGE', id: items[0].id }), 409, 'RELEASE_LOCKED');
  expect((await api('POST', `/api/workflow/approvals/${second.body.correlationId}/decide`, otherManager, { decision: 'APPROVED' })).status).toBe(200);
  await waitUntil('the release published', async () => (await api('GET', `${RELEASES}/${id}`, editor)).body.status === 'PUBLISHED');
});

test("a release holding an ADMIN-only item is an ADMIN's: an EDITOR can neither change its items, publish it nor delete it; a release never published can be deleted, a published one cannot", async () => {
  const definition = await api('POST', '/api/workflow/definitions', admin, {
    siteId: OPEN_SITE,
    name: 'release-chain',
    stages: [{ name: 'one', role: 'MANAGER' }],
  });
  const release = await api('POST', RELEASES, admin, { name: 'chains', siteId: OPEN_SITE });
  const added = await api('POST', `${RELEASES}/${release.body.id}/items`, admin, { type: 'WORKFLOW_DEFINITION', id: definition.body.id });
  expect(added.status).toBe(201);
  const at = `${RELEASES}/${release.body.id}`;
  expectProblem(await api('DELETE', `${at}/items/${added.body.items[0].id}`, editor), 403, 'FORBIDDEN');
  const [page] = await threeItems(OPEN_SITE);
  expectProblem(await api('POST', `${at}/items`, editor, { type: 'PAGE', id: page.id }), 403, 'FORBIDDEN');
  expectProblem(await api('POST', `${at}/publish`, editor, {}), 403, 'FORBIDDEN');
  expectProblem(await api('POST', `${at}/schedule`, editor, { at: new Date(Date.now() + 3600_000).toISOString() }), 403, 'FORBIDDEN');
  expectProblem(await api('DELETE', at, editor), 403, 'FORBIDDEN');
  expect((await api('GET', at, editor)).body.itemCount).toBe(1);
  expect((await api('DELETE', at, admin)).status).toBe(204);
  expectProblem(await api('GET', at, admin), 404, 'NOT_FOUND');

  const [, web] = await threeItems(OPEN_SITE);
  const published = await releaseOf(OPEN_SITE, [web]);
  expect((await api('POST', `${RELEASES}/${published}/publish`, editor, {})).status).toBe(200);
  expectProblem(await api('DELETE', `${RELEASES}/${published}`, editor), 409, 'RELEASE_LOCKED');
});

test('a scheduled release that fails at its time publishes nothing, and its job-log row says FAILED and why', async () => {
  const [, web, mail] = await threeItems(OPEN_SITE);
  const id = await releaseOf(OPEN_SITE, [web, mail]);
  expect((await api('POST', `${RELEASES}/${id}/schedule`, editor, { at: new Date(Date.now() + 4000).toISOString() })).status).toBe(202);
  expect((await api('DELETE', `${mail.collection}/${mail.id}`, editor)).status).toBe(204);
  const failed = await waitUntil('the release failed', async () => {
    const now = (await api('GET', `${RELEASES}/${id}`, editor)).body;
    return now.status === 'FAILED' ? now : null;
  });
  expect(failed.failure).toEqual([expect.objectContaining({ componentId: mail.id, reason: 'ITEM_DELETED' })]);
  expect((await api('GET', `${web.collection}/${web.id}`, editor)).body.publishedRev).toBeNull();
  const logged = await waitUntil('the job-log row', async () =>
    thisFile.platform.db('settings.scheduler_job_log').where({ job_name: 'scheduled-publish' }).andWhere('message', 'like', `%release ${id}%`).first(),
  );
  expect(logged).toEqual(expect.objectContaining({ status: 'FAILED', message: expect.stringContaining('published nothing') }));
});
