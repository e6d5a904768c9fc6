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

test('(c) an editor publishes a page under a policy; the manager approves it from the queue after seeing the comparison; the page shows PUBLISHED', async ({
  page,
  signIn,
}) => {
  await signIn('editor');
  await page.getByRole('link', { name: 'Content' }).click();
  await expect(page.getByRole('heading', { name: 'Content · pages' })).toBeVisible();
  await page.getByLabel('Name', { exact: true }).fill('spring-sale');
  await page.getByLabel('Fields (JSON)').fill(JSON.stringify({ slug: 'spring-sale', title: 'Spring sale', data: { banner: 'Half price' } }));
  await page.getByRole('button', { name: 'Create the draft' }).click();
  await expect(page.getByRole('heading', { name: 'spring-sale' })).toBeVisible();
  await expect(page.getByText('DRAFT', { exact: true })).toBeVisible();
  await checkScreen(page, 'content-item');

  await page.getByLabel('Comment for the approvers').fill('For the spring campaign');
  await page.getByRole('button', { name: 'Publish' }).click();
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
  const editor = await opsflow.tokenOf('editor');
  const created = await call(opsflow.api.url, 'POST', '/api/content/web-content', {
    token: editor,
    body: { siteId: 'site-1', name: 'footer', slug: 'footer', title: 'First words', data: { n: 1 } },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const second = await call(opsflow.api.url, 'PUT', `/api/content/web-content/${created.body.id}`, {
    token: editor,
    body: { name: 'footer', slug: 'footer', title: 'Second words', data: { n: 2 } },
  });
  expect(second.status, JSON.stringify(second.body)).toBe(200);

  await signIn('editor');
  await page.goto(`${opsflow.api.url}/console/content/web-content/${created.body.id}`);
  await expect(page.getByRole('heading', { name: 'footer' })).toBeVisible();
  // The history is a query of its own, which may answer after the heading's: wait for its two rows (all() does not wait).
  await expect(page.getByRole('button', { name: /^View Revision / })).toHaveCount(2);
  const revisions = await page.getByRole('button', { name: /^View Revision / }).all();
  const first = Math.min(...(await Promise.all(revisions.map(async (button) => Number((await button.getAttribute('aria-label'))!.split(' ').pop())))));
  await page.getByRole('button', { name: `View Revision ${first}` }).click();
  await expect(page.getByTestId('entity-at-revision')).toContainText('First words');
  await page.getByRole('button', { name: `Restore as draft Revision ${first}` }).click();
  await expect(page.getByRole('button', { name: /^View Revision / })).toHaveCount(3);
  await expect(page.locator('pre').first()).toContainText('First words');
  await page.getByRole('button', { name: 'Sign out' }).click();

  await signIn('viewer');
  await page.goto(`${opsflow.api.url}/console/content/web-content/${created.body.id}`);
  await expect(page.getByRole('heading', { name: 'footer' })).toBeVisible();
  await expect(page.getByTestId('read-only')).toBeVisible();
  await expect(page.getByRole('button', { name: /^View Revision / })).toHaveCount(3);
  for (const action of ['Publish', 'Archive', /^Restore as draft/]) await expect(page.getByRole('button', { name: action })).toHaveCount(0);
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
