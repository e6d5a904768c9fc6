import { call } from '../support/http';
import { checkScreen, expect, localTimeAhead, test } from './fixtures';

/**
 * Releases in the console: a page, a web content item and an email template put in one release, scheduled,
 * approved by a manager as a whole, and published all three at its time; and a release whose item was
 * deleted, which publishes none and says which item and why.
 */

type Platform = { api: { url: string }; tokenOf(user: 'editor' | 'admin'): Promise<string> };

/** A page, a web content item and an email template of site-1, written through the API as the editor. */
async function threeDrafts(opsflow: Platform, tag: string) {
  const editor = await opsflow.tokenOf('editor');
  const made: Record<string, { id: string; collection: string; name: string }> = {};
  for (const [type, collection, body] of [
    ['PAGE', '/api/content/pages', { name: `${tag}-page`, slug: `${tag}-page`, title: 'Launch', data: {} }],
    ['WEB_CONTENT', '/api/content/web-content', { name: `${tag}-banner`, slug: `${tag}-banner`, title: 'Banner', data: {} }],
    [
      'EMAIL_TEMPLATE',
      '/api/email/templates',
      { name: `${tag}-mail`, roleKey: null, subjectEn: 'Hi', bodyEn: '<p>Hi</p>', subjectAr: 'أهلا', bodyAr: '<p>أهلا</p>' },
    ],
  ] as const) {
    const created = await call(opsflow.api.url, 'POST', collection, { token: editor, body: { siteId: 'site-1', ...body } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    made[type] = { id: created.body.id, collection, name: body.name };
  }
  return { editor, made };
}

test.beforeAll(async ({ opsflow }) => {
  // Pages of site-1 need a manager's approval (another file may have set it already).
  const admin = await opsflow.tokenOf('admin');
  const policy = await call(opsflow.api.url, 'POST', '/api/workflow/approvals/policies', {
    token: admin,
    body: { componentType: 'PAGE', siteId: 'site-1', enabled: true },
  });
  expect([201, 409]).toContain(policy.status);
});

test('a release of a page, a web content item and an email template, approved by a manager, publishes all three at its time', async ({
  page,
  signIn,
  opsflow,
}) => {
  const { editor, made } = await threeDrafts(opsflow, 'launch');
  await signIn('editor');
  await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: 'Releases' }).click();
  await page.getByLabel('Name', { exact: true }).fill('Spring launch');
  await page.getByRole('button', { name: 'Create the release' }).click();
  await expect(page.getByRole('heading', { name: 'Spring launch' })).toBeVisible();
  const releaseId = page.url().split('/').pop()!;
  for (const [type, item] of Object.entries(made)) {
    await page.getByLabel('Type', { exact: true }).selectOption(type);
    await page.getByLabel('Item', { exact: true }).selectOption({ label: `${item.name} (DRAFT)` });
    await page.getByRole('button', { name: 'Add to the release' }).click();
    await expect(page.getByRole('table', { name: 'Items' }).getByRole('row', { name: new RegExp(item.name) })).toBeVisible();
  }
  await expect(page.getByRole('table', { name: 'Items' }).getByRole('row')).toHaveCount(4);

  const due = await localTimeAhead(page, 20);
  await page.getByLabel('Publish the release at').fill(due.local);
  await page.getByRole('button', { name: 'Schedule the release' }).click();
  await expect(page.getByText('PENDING_APPROVAL', { exact: true }).first()).toBeVisible();
  await checkScreen(page, 'release');
  await page.getByRole('button', { name: 'Sign out' }).click();

  await signIn('manager');
  await page.getByRole('link', { name: 'Approvals' }).click();
  const request = page.getByRole('article', { name: /Spring launch/ });
  await request.getByLabel('Comment').fill('All three together');
  await request.getByRole('button', { name: 'Approve' }).click();
  await expect(request).toHaveCount(0, { timeout: 30000 });

  await page.goto(`${opsflow.api.url}/console/releases/${releaseId}`);
  await expect(page.getByText('PUBLISHED', { exact: true }).first()).toBeVisible({ timeout: 60000 });
  const release = (await call(opsflow.api.url, 'GET', `/api/content/releases/${releaseId}`, { token: editor })).body;
  const late = Date.parse(release.publishedAt) - due.ms;
  expect(late).toBeGreaterThanOrEqual(0);
  expect(late).toBeLessThanOrEqual(1000);
  for (const item of Object.values(made)) {
    const state = (await call(opsflow.api.url, 'GET', `${item.collection}/${item.id}`, { token: editor })).body;
    expect([state.status, state.publishedAt]).toEqual(['PUBLISHED', release.publishedAt]);
  }
  await page.getByRole('link', { name: 'Back to the releases' }).click();
  await expect(page.getByRole('table', { name: 'Releases' }).getByRole('row', { name: /Spring launch/ })).toContainText('PUBLISHED');
  await checkScreen(page, 'releases');
});

test('a release whose item was deleted publishes none, and names the item and why', async ({ page, signIn, opsflow }) => {
  const { editor, made } = await threeDrafts(opsflow, 'broken');
  const created = await call(opsflow.api.url, 'POST', '/api/content/releases', { token: editor, body: { name: 'Broken launch', siteId: 'site-1' } });
  const id = created.body.id as string;
  for (const type of ['WEB_CONTENT', 'EMAIL_TEMPLATE']) {
    const added = await call(opsflow.api.url, 'POST', `/api/content/releases/${id}/items`, { token: editor, body: { type, id: made[type].id } });
    expect(added.status).toBe(201);
  }
  expect((await call(opsflow.api.url, 'DELETE', `/api/content/web-content/${made.WEB_CONTENT.id}`, { token: editor })).status).toBe(204);

  await signIn('editor');
  await page.goto(`${opsflow.api.url}/console/releases/${id}`);
  await expect(page.getByRole('heading', { name: 'Broken launch' })).toBeVisible();
  await expect(page.getByRole('table', { name: 'Items' })).toContainText('(deleted)');
  await page.getByRole('button', { name: 'Publish the release' }).click();
  const failure = page.getByTestId('release-failure');
  await expect(failure).toContainText('Nothing of the release was published');
  await expect(failure).toContainText('ITEM_DELETED');
  await expect(failure).toContainText(`WEB_CONTENT ${made.WEB_CONTENT.id}: was deleted`);
  const mail = (await call(opsflow.api.url, 'GET', `/api/email/templates/${made.EMAIL_TEMPLATE.id}`, { token: editor })).body;
  expect([mail.status, mail.publishedRev]).toEqual(['DRAFT', null]);
});
