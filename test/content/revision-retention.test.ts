import { platformWithApi } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { waitUntil } from '../support/wait';
import { recordNewestHistory } from '../support/histories';
import { REVISION_RETENTION_SCHEDULE_ID } from '../../workflows/approvals/definitions';

/**
 * Revision retention: a rule keeps each item's last N revisions, and every revision that was published or
 * that a scheduled publish still names, whatever its age. A rule of a site beats the global one.
 */
const thisFile = platformWithApi();
let admin: string;
let editor: string;

beforeAll(async () => {
  await thisFile.platform.startWorker(['approvals']);
  admin = await thisFile.platform.token({ sub: 'ada', name: 'Ada Admin', roles: ['ADMIN'] });
  editor = await thisFile.platform.token({ sub: 'eda', name: 'Eda Editor', roles: ['EDITOR'], sites: ['site-r', 'site-r2'] });
});

const RULES = '/api/content/revision-retention';
const rule = (body: Record<string, unknown>, token = admin) => call(thisFile.api.url, 'POST', RULES, { token, body });
let pages = 0;
async function newPage(siteId: string): Promise<string> {
  const slug = `keep-${++pages}`;
  const created = await call(thisFile.api.url, 'POST', '/api/content/pages', {
    token: editor,
    body: { siteId, name: slug, slug, title: 'v1', data: { v: 1 } },
  });
  expect(created.status).toBe(201);
  return created.body.id;
}
const edit = async (id: string, v: number) => {
  const edited = await call(thisFile.api.url, 'PUT', `/api/content/pages/${id}`, {
    token: editor,
    body: { name: `keep-${id.slice(0, 8)}`, slug: `keep-${id.slice(0, 8)}`, title: `v${v}`, data: { v } },
  });
  expect(edited.status).toBe(200);
};
const revs = async (id: string): Promise<number[]> =>
  (await call(thisFile.api.url, 'GET', `/api/content/pages/${id}/history?limit=100`, { token: editor })).body.items.map((item: { rev: number }) => item.rev);

test('rules are ADMIN-only and one per type and site: an EDITOR gets 403, a second rule 409 CONFLICT, keepLast 0 400; nothing is saved', async () => {
  expectProblem(await rule({ componentType: 'PAGE', siteId: 'site-r', keepLast: 3 }, editor), 403, 'FORBIDDEN');
  expectProblem(await rule({ componentType: 'PAGE', siteId: 'site-r', keepLast: 0 }), 400, 'VALIDATION_FAILED');
  const created = await rule({ componentType: 'PAGE', siteId: 'site-r', keepLast: 3 });
  expect(created.status).toBe(201);
  expect(created.body).toEqual(expect.objectContaining({ componentType: 'PAGE', siteId: 'site-r', keepLast: 3, updatedBy: 'ada' }));
  expectProblem(await rule({ componentType: 'PAGE', siteId: 'site-r', keepLast: 5 }), 409, 'CONFLICT');
  const listed = await call(thisFile.api.url, 'GET', RULES, { token: admin });
  expect(listed.body.items).toEqual([expect.objectContaining({ id: created.body.id, keepLast: 3 })]);
});

test('each write keeps the last 3 and the revision that was published; a scheduled publish keeps its revision until it is cancelled', async () => {
  const id = await newPage('site-r');
  await edit(id, 2);
  await edit(id, 3);
  const published = await call(thisFile.api.url, 'POST', `/api/content/pages/${id}/publish`, { token: editor, body: {} });
  expect(published.status).toBe(200);
  const live = published.body.publishedRev as number;
  for (const v of [4, 5, 6, 7]) await edit(id, v);
  const [latest, ...older] = await revs(id);
  expect(older).toHaveLength(3);
  expect(older[2]).toBe(live);
  expect(latest > older[0] && older[0] > older[1] && older[1] > live).toBe(true);
  // What is live still reads, and so does the published revision's history entry.
  expect((await call(thisFile.api.url, 'GET', `/api/public/sites/site-r/pages/keep-${id.slice(0, 8)}`)).body).toEqual(expect.objectContaining({ title: 'v3' }));
  expect((await call(thisFile.api.url, 'GET', `/api/content/pages/${id}/history/${live}`, { token: editor })).status).toBe(200);

  const scheduled = await call(thisFile.api.url, 'POST', `/api/content/pages/${id}/publish`, {
    token: editor,
    body: { publishAt: new Date(Date.now() + 86400000).toISOString() },
  });
  expect(scheduled.status).toBe(202);
  const [listed] = (await call(thisFile.api.url, 'GET', '/api/workflow/scheduled?siteId=site-r', { token: editor })).body.items;
  const due = listed.revision as number;
  expect(listed).toEqual(expect.objectContaining({ id, action: 'PUBLISH' }));
  for (const v of [8, 9, 10, 11]) await edit(id, v);
  const whileScheduled = await revs(id);
  expect(whileScheduled).toContain(due);
  expect(whileScheduled).toContain(live);
  expect(whileScheduled).toHaveLength(5);

  expect((await call(thisFile.api.url, 'DELETE', `/api/content/pages/${id}/schedule`, { token: editor })).status).toBe(200);
  await edit(id, 12);
  const after = await revs(id);
  expect(after).not.toContain(due);
  expect(after).toHaveLength(4);
  expect(after.slice(1, 3)).toEqual(whileScheduled.slice(0, 2));
  expect(after[3]).toBe(live);
});

test('a global rule prunes every site without its own at once, when it is saved; a site with its own keeps to that', async () => {
  const other = await newPage('site-r2');
  for (const v of [2, 3, 4, 5, 6]) await edit(other, v);
  expect(await revs(other)).toHaveLength(6);
  const own = await newPage('site-r');
  for (const v of [2, 3, 4]) await edit(own, v);
  expect(await revs(own)).toHaveLength(3);

  const global = await rule({ componentType: 'PAGE', siteId: null, keepLast: 2 });
  expect(global.status).toBe(201);
  expect(await revs(other)).toHaveLength(2);
  expect(await revs(own)).toHaveLength(3);
  // A rule for another type touches no page.
  expect((await rule({ componentType: 'PORTLET', siteId: null, keepLast: 1 })).status).toBe(201);
  expect(await revs(other)).toHaveLength(2);
});

test('a revision a release names is kept, published or not, whatever its age; out of the release, it goes', async () => {
  const id = await newPage('site-r');
  const first = (await revs(id))[0];
  const release = await call(thisFile.api.url, 'POST', '/api/content/releases', { token: editor, body: { name: 'keeps', siteId: 'site-r' } });
  const added = await call(thisFile.api.url, 'POST', `/api/content/releases/${release.body.id}/items`, {
    token: editor,
    body: { type: 'PAGE', id, revision: first },
  });
  expect(added.status).toBe(201);
  for (const v of [2, 3, 4, 5, 6]) await edit(id, v);
  const kept = await revs(id);
  expect(kept).toHaveLength(4);
  expect(kept[3]).toBe(first);

  expect((await call(thisFile.api.url, 'DELETE', `/api/content/releases/${release.body.id}/items/${added.body.items[0].id}`, { token: editor })).status).toBe(
    204,
  );
  await edit(id, 7);
  expect(await revs(id)).not.toContain(first);
});

test('the daily job prunes what no write did (a revision a release let go) and writes its run to the scheduler job log', async () => {
  const id = await newPage('site-r');
  const first = (await revs(id))[0];
  const release = await call(thisFile.api.url, 'POST', '/api/content/releases', { token: editor, body: { name: 'let go', siteId: 'site-r' } });
  const added = await call(thisFile.api.url, 'POST', `/api/content/releases/${release.body.id}/items`, {
    token: editor,
    body: { type: 'PAGE', id, revision: first },
  });
  for (const v of [2, 3, 4, 5]) await edit(id, v);
  expect((await call(thisFile.api.url, 'DELETE', `/api/content/releases/${release.body.id}/items/${added.body.items[0].id}`, { token: editor })).status).toBe(
    204,
  );
  // No write since: the revision stays until the job runs.
  expect(await revs(id)).toContain(first);

  // The approvals worker ensured the schedule at its start; a trigger runs it now.
  const schedule = thisFile.platform.temporal.client.schedule.getHandle(REVISION_RETENTION_SCHEDULE_ID);
  expect((await schedule.describe()).action).toEqual(expect.objectContaining({ workflowType: 'pruneRevisionsDaily' }));
  const before = await thisFile.platform.db('settings.scheduler_job_log').where({ job_name: 'revision-retention' }).count('* as n');
  await schedule.trigger();
  const logged = await waitUntil('the revision retention run in the job log', async () => {
    const rows = await thisFile.platform.db('settings.scheduler_job_log').where({ job_name: 'revision-retention' }).orderBy('started_at', 'desc');
    return rows.length > Number(before[0].n) ? rows[0] : null;
  });
  expect(logged).toEqual(expect.objectContaining({ status: 'SUCCESS', site_id: '_platform' }));
  expect(Number(logged.rows_affected)).toBeGreaterThanOrEqual(1);
  expect(logged.message).toMatch(/revision\(s\) pruned under \d+ rule\(s\)/);
  const kept = await revs(id);
  expect(kept).not.toContain(first);
  expect(kept).toHaveLength(3);
  await recordNewestHistory(thisFile.platform.temporal, { workflowType: 'pruneRevisionsDaily', name: 'prune-revisions-daily' });
});
