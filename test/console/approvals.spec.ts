import { call } from '../support/http';
import { checkScreen, expect, test } from './fixtures';

/**
 * Flow (c): an editor publishes a page under a policy, the manager approves it from the queue after seeing
 * the comparison, and the page shows PUBLISHED. Also: the content screens, and a four-eyes refusal as the
 * API words it.
 */

test.beforeAll(async ({ opsflow }) => {
  const admin = await opsflow.tokenOf('admin');
  const policy = await call(opsflow.api.url, 'POST', '/api/workflow/approvals/policies', {
    token: admin,
    body: { componentType: 'PAGE', siteId: 'site-1', enabled: true },
  });
  expect(policy.status).toBe(201);
});

/** A web content draft in site-1, written through the API as the editor; answers its id and the editor's token. */
async function webContentDraft(opsflow: { api: { url: string }; tokenOf(user: 'editor'): Promise<string> }, body: Record<string, unknown>) {
  const editor = await opsflow.tokenOf('editor');
  const created = await call(opsflow.api.url, 'POST', '/api/content/web-content', { token: editor, body: { siteId: 'site-1', ...body } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: created.body.id as string, editor };
}

test('(c) an editor publishes a page under a policy; the manager approves it from the queue after seeing the comparison; the page shows PUBLISHED', async ({
  page,
  signIn,
}) => {
  await signIn('editor');
  await page.getByRole('link', { name: 'Content' }).click();
  await expect(page.getByRole('heading', { name: 'Content · pages' })).toBeVisible();
  await page.getByLabel('Name', { exact: true }).fill('spring-sale');
  await page.getByLabel('Slug', { exact: true }).fill('spring-sale');
  await page.getByLabel('Title', { exact: true }).fill('Spring sale');
  // A key the page type does not name is free JSON.
  await page.getByLabel('Other fields (JSON)').fill(JSON.stringify({ banner: 'Half price' }));
  await page.getByRole('button', { name: 'Create the draft' }).click();
  await expect(page.getByRole('heading', { name: 'spring-sale' })).toBeVisible();
  await expect(page.getByText('DRAFT', { exact: true })).toBeVisible();
  await checkScreen(page, 'content-item');

  await page.getByLabel('Comment for the approvers').fill('For the spring campaign');
  await page.getByRole('button', { name: 'Publish', exact: true }).click();
  await expect(page.getByTestId('publish-outcome')).toHaveText('Waiting for approval');
  await expect(page.getByText('PENDING_APPROVAL', { exact: true }).first()).toBeVisible();

  // The editor's own requests; the queue is not theirs.
  await page.getByRole('link', { name: 'Approvals' }).click();
  await expect(page.getByRole('tab', { name: 'Waiting for my decision' })).toHaveCount(0);
  const mine = page.getByRole('article', { name: /spring-sale/ });
  await expect(mine).toContainText('PENDING');
  await expect(mine.getByRole('button', { name: 'Approve' })).toHaveCount(0);
  await page.getByRole('button', { name: 'Sign out' }).click();

  await signIn('manager');
  await page.getByRole('link', { name: 'Approvals' }).click();
  const request = page.getByRole('article', { name: /spring-sale/ });
  await expect(request).toContainText('“For the spring campaign”');
  const comparison = request.getByRole('table', { name: /Submitted revision against what is live/ });
  await expect(comparison.getByRole('row', { name: /\/title/ })).toContainText('Spring sale');
  await expect(comparison.getByRole('row', { name: /\/data\/banner|\/data/ }).first()).toContainText('Half price');
  await expect(request.getByText('Nothing of it is live yet.')).toBeVisible();
  await checkScreen(page, 'approvals');
  await request.getByLabel('Comment').fill('Looks right');
  await request.getByRole('button', { name: 'Approve' }).click();
  await expect(request).toHaveCount(0, { timeout: 30000 });

  await page.getByRole('link', { name: 'Content' }).click();
  const row = page.getByRole('table', { name: 'Content: pages' }).getByRole('row', { name: /spring-sale/ });
  await expect(async () => {
    await page.reload();
    await expect(row).toContainText('PUBLISHED', { timeout: 2000 });
  }).toPass({ timeout: 60000 });
  await row.getByRole('link', { name: 'spring-sale' }).click();
  await expect(page.getByLabel('History', { exact: true })).toContainText('PUBLISHED');
  await checkScreen(page, 'content');
});

test('content history: a revision is shown as it was and restored as a draft; a VIEWER reads it all with no action button', async ({
  page,
  signIn,
  opsflow,
}) => {
  const { id, editor } = await webContentDraft(opsflow, { name: 'footer', slug: 'footer', title: 'First words', data: { n: 1 } });
  const second = await call(opsflow.api.url, 'PUT', `/api/content/web-content/${id}`, {
    token: editor,
    body: { name: 'footer', slug: 'footer', title: 'Second words', data: { n: 2 } },
  });
  expect(second.status, JSON.stringify(second.body)).toBe(200);

  await signIn('editor');
  await page.goto(`${opsflow.api.url}/console/content/web-content/${id}`);
  await expect(page.getByRole('heading', { name: 'footer' })).toBeVisible();
  // The history is a query of its own, which may answer after the heading's: wait for its two rows (all() does not wait).
  await expect(page.getByRole('button', { name: /^View Revision / })).toHaveCount(2);
  const revisions = await page.getByRole('button', { name: /^View Revision / }).all();
  const first = Math.min(...(await Promise.all(revisions.map(async (button) => Number((await button.getAttribute('aria-label'))!.split(' ').pop())))));
  await page.getByRole('button', { name: `View Revision ${first}` }).click();
  await expect(page.getByTestId('entity-at-revision')).toContainText('First words');
  await page.getByRole('button', { name: `Restore as draft Revision ${first}` }).click();
  await expect(page.getByRole('button', { name: /^View Revision / })).toHaveCount(3);
  await expect(page.getByLabel('Title', { exact: true })).toHaveValue('First words');
  await page.getByRole('button', { name: 'Sign out' }).click();

  await signIn('viewer');
  await page.goto(`${opsflow.api.url}/console/content/web-content/${id}`);
  await expect(page.getByRole('heading', { name: 'footer' })).toBeVisible();
  await expect(page.getByTestId('read-only')).toBeVisible();
  await expect(page.getByRole('button', { name: /^View Revision / })).toHaveCount(3);
  for (const action of ['Publish', 'Archive', /^Restore as draft/]) await expect(page.getByRole('button', { name: action })).toHaveCount(0);
});

test('compare, side by side: revisions 1 and 3 field by field, added, removed and changed, the changed text marked inside the line; revision 1 restored from there', async ({
  page,
  signIn,
  opsflow,
}) => {
  const { id, editor } = await webContentDraft(opsflow, { name: 'banner', slug: 'banner', title: 'Summer sale today', data: { colour: 'red', size: 2 } });
  const at = (path = '') => `/api/content/web-content/${id}${path}`;
  for (const body of [
    { name: 'banner', slug: 'banner', title: 'Summer sale today', data: { colour: 'red', size: 3 } },
    { name: 'banner', slug: 'banner', title: 'Winter sale today', data: { colour: 'blue', link: '/offers' } },
  ]) {
    const edited = await call(opsflow.api.url, 'PUT', at(), { token: editor, body });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
  }
  const revs = ((await call(opsflow.api.url, 'GET', at('/history'), { token: editor })).body.items as Array<{ rev: number }>).map((item) => item.rev);
  const [third, , first] = revs;

  await signIn('editor');
  await page.goto(`${opsflow.api.url}/console/content/web-content/${id}`);
  await expect(page.getByRole('button', { name: /^View Revision / })).toHaveCount(3);
  const compare = page.getByRole('heading', { name: 'Compare revisions' }).locator('..');
  await compare.getByLabel('From revision').selectOption(String(first));
  await compare.getByLabel('To revision').selectOption(String(third));
  await compare.getByRole('button', { name: 'Compare' }).click();
  const table = compare.getByRole('table', { name: `Compare revisions ${first} → ${third}` });
  await expect(table.getByRole('row', { name: /\/data\/link/ })).toContainText('added');
  await expect(table.getByRole('row', { name: /\/data\/size/ })).toContainText('removed');
  const title = table.getByRole('row', { name: /\/title/ });
  await expect(title).toContainText('changed');
  // Only what differs is marked: "Summer" struck on one side, "Winter" on the other, " sale today" plain.
  await expect(title.getByTestId('before-marked')).toHaveText('Summ');
  await expect(title.getByTestId('after-marked')).toHaveText('Wint');
  await expect(table.getByRole('row', { name: /\/data\/colour/ }).getByTestId('after-marked')).toHaveText('blue');
  await checkScreen(page, 'content-compare');

  await compare.getByRole('button', { name: `Restore revision ${first}` }).click();
  await expect(page.getByRole('button', { name: /^View Revision / })).toHaveCount(4);
  await expect(page.getByLabel('Title', { exact: true })).toHaveValue('Summer sale today');
});

test("schedule from the console: a publish a few seconds ahead, in the browser's time zone as shown, is listed on the item and happens; an archive set for tomorrow is cancelled on the Scheduled screen", async ({
  page,
  signIn,
  opsflow,
}) => {
  const { id, editor } = await webContentDraft(opsflow, { name: 'notice', slug: 'notice', title: 'Opening hours', data: { n: 1 } });
  await signIn('editor');
  await page.goto(`${opsflow.api.url}/console/content/web-content/${id}`);
  await expect(page.getByRole('heading', { name: 'notice' })).toBeVisible();
  const timeZone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
  await expect(page.getByTestId('time-zone')).toHaveText(`Times are in ${timeZone}`);
  // A datetime-local value in the browser's own zone, `seconds` from now.
  const localIn = (seconds: number) =>
    page.evaluate((ahead) => {
      const at = new Date(Date.now() + ahead * 1000);
      const pad = (n: number) => String(n).padStart(2, '0');
      return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}`;
    }, seconds);

  await page.getByLabel('Publish at').fill(await localIn(8));
  await page.getByRole('button', { name: 'Schedule the publish' }).click();
  const onItem = page.getByRole('table', { name: 'Scheduled for this item' });
  await expect(onItem.getByRole('row', { name: /PUBLISH/ })).toBeVisible();
  await expect(page.getByText('PUBLISHED', { exact: true })).toBeVisible({ timeout: 30000 });
  await expect(onItem.getByRole('row', { name: /PUBLISH/ })).toHaveCount(0, { timeout: 10000 });

  await page.getByLabel('Unpublish (archive) at').fill(await localIn(86400));
  await page.getByRole('button', { name: 'Schedule the archive' }).click();
  await expect(onItem.getByRole('row', { name: /ARCHIVE/ })).toBeVisible();

  await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: 'Scheduled' }).click();
  await expect(page.getByRole('heading', { name: 'Scheduled' })).toBeVisible();
  const listed = page.getByRole('table', { name: 'Scheduled' }).getByRole('row', { name: new RegExp(`ARCHIVE`) });
  await expect(listed).toContainText(id.slice(0, 8));
  await checkScreen(page, 'scheduled');
  await listed.getByRole('button', { name: /^Cancel ARCHIVE/ }).click();
  await expect(page.getByText('Nothing is scheduled.')).toBeVisible();
  const stillThere = await call(opsflow.api.url, 'GET', '/api/workflow/scheduled?siteId=site-1', { token: editor });
  expect(stillThere.body.items.filter((change: { id: string }) => change.id === id)).toEqual([]);
});

test('the requester deciding their own request gets the four-eyes refusal, worded by the API', async ({ page, signIn, opsflow }) => {
  const admin = await opsflow.tokenOf('admin');
  const created = await call(opsflow.api.url, 'POST', '/api/content/pages', {
    token: admin,
    body: { siteId: 'site-1', name: 'own-page', slug: 'own-page', title: 'Mine', data: {} },
  });
  expect((await call(opsflow.api.url, 'POST', `/api/content/pages/${created.body.id}/publish`, { token: admin, body: {} })).status).toBe(202);
  await signIn('admin');
  await page.getByRole('link', { name: 'Approvals' }).click();
  const request = page.getByRole('article', { name: /own-page/ });
  await request.getByRole('button', { name: 'Approve' }).click();
  await expect(request.getByRole('alert')).toContainText('SELF_APPROVAL_FORBIDDEN');
});

test('lists page with the API\'s cursors: 25 at first, the rest on "Load more"', async ({ page, signIn, opsflow }) => {
  const editor = await opsflow.tokenOf('editor');
  for (let n = 1; n <= 30; n++) {
    const created = await call(opsflow.api.url, 'POST', '/api/content/navigation', {
      token: editor,
      body: { siteId: 'site-1', name: `nav-${n}`, slug: `nav-${n}`, title: `Nav ${n}`, data: {} },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }
  await signIn('editor');
  await page.goto(`${opsflow.api.url}/console/content/navigation`);
  const rows = page.getByRole('table', { name: 'Content: navigation' }).getByRole('row');
  await expect(rows).toHaveCount(26);
  await page.getByRole('button', { name: 'Load more' }).click();
  await expect(rows).toHaveCount(31);
  await expect(page.getByRole('button', { name: 'Load more' })).toHaveCount(0);
});
