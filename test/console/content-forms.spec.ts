import { call } from '../support/http';
import { checkScreen, expect, localTimeAhead, test } from './fixtures';

/**
 * The editor's day in the console: a page written through its typed form (both languages side by side, the
 * Arabic right to left, the API's validation shown on its field), edited twice with comments, revisions 1
 * and 3 compared, revision 1 restored, a publish scheduled that happens within a second of its time, and
 * what visitors read in each language, the fallback texts marked.
 */
test('an editor creates a PAGE through its form, edits it twice, compares revisions 1 and 3, restores 1, and a scheduled publish fires within a second of its time', async ({
  page,
  signIn,
  opsflow,
}) => {
  await signIn('editor');
  await page.getByRole('link', { name: 'Content' }).click();
  await expect(page.getByRole('heading', { name: 'Content · pages' })).toBeVisible();
  await page.getByLabel('Name', { exact: true }).fill('visit-us');
  await page.getByLabel('Slug', { exact: true }).fill('Visit Us');
  await page.getByLabel('Title', { exact: true }).fill('Visit us');
  await page.getByLabel('Heading · English', { exact: true }).fill('Visit us');
  // Rich text: the English written in the visual editor and made bold, the Arabic typed as HTML source.
  const englishBody = page.getByRole('textbox', { name: 'Body · English', exact: true });
  await englishBody.fill('Open daily');
  await englishBody.press('ControlOrMeta+a');
  await page.getByRole('button', { name: 'Bold', exact: true }).first().click();
  await expect(englishBody.locator('strong')).toHaveText('Open daily');
  await expect(page.getByRole('textbox', { name: 'Body · Arabic', exact: true })).toHaveCSS('direction', 'rtl');
  await expect(englishBody).toHaveCSS('direction', 'ltr');
  await page.getByLabel('Body · Arabic: HTML source').check();
  await page.getByLabel('Body · Arabic (HTML)').fill('<p>مفتوح يوميًا</p>');
  await expect(page.getByLabel('Body · Arabic (HTML)')).toHaveCSS('direction', 'rtl');
  await page.getByLabel('Indexing').selectOption('index');
  // The site's locale fallback is shown to its editors, and is an ADMIN's to switch.
  await expect(page.getByRole('switch', { name: 'Public reads fall back to the other language' })).toBeChecked();
  await expect(page.getByRole('switch', { name: 'Public reads fall back to the other language' })).toBeDisabled();

  // The API refuses the slug; its words show on the slug's own field, and nothing is created.
  await page.getByRole('button', { name: 'Create the draft' }).click();
  await expect(page.getByLabel('Slug', { exact: true })).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByText(/must match pattern/).first()).toBeVisible();
  await expect(page.getByLabel('Title', { exact: true })).not.toHaveAttribute('aria-invalid', 'true');
  await checkScreen(page, 'content-new');
  await page.getByLabel('Slug', { exact: true }).fill('visit-us');
  await page.getByRole('button', { name: 'Create the draft' }).click();
  await expect(page.getByRole('heading', { name: 'visit-us' })).toBeVisible();
  const id = page.url().split('/').pop()!;
  const editor = await opsflow.tokenOf('editor');
  const created = (await call(opsflow.api.url, 'GET', `/api/content/pages/${id}`, { token: editor })).body;
  expect(created.data.body).toEqual({ en: '<p><strong>Open daily</strong></p>', ar: '<p>مفتوح يوميًا</p>' });

  const history = page.getByLabel('History', { exact: true });
  const saveWith = async (comment: string) => {
    await page.getByLabel('What changed (kept with the revision)').fill(comment);
    await page.getByRole('button', { name: 'Save as a new revision' }).click();
  };
  await page.getByLabel('Title', { exact: true }).fill('Visit us today');
  await saveWith('A warmer title');
  await expect(page.getByRole('button', { name: /^View Revision / })).toHaveCount(2);
  await page.getByLabel('Heading · Arabic', { exact: true }).fill('زورونا');
  await saveWith('The Arabic heading');
  await expect(page.getByRole('button', { name: /^View Revision / })).toHaveCount(3);
  await expect(history).toContainText('“A warmer title”');
  await expect(history).toContainText('“The Arabic heading”');

  const revs = ((await call(opsflow.api.url, 'GET', `/api/content/pages/${id}/history`, { token: editor })).body.items as Array<{ rev: number }>).map(
    (item) => item.rev,
  );
  const [third, , first] = revs;
  const compare = page.getByRole('heading', { name: 'Compare revisions' }).locator('..');
  await compare.getByLabel('From revision').selectOption(String(first));
  await compare.getByLabel('To revision').selectOption(String(third));
  await compare.getByRole('button', { name: 'Compare' }).click();
  const table = compare.getByRole('table', { name: `Compare revisions ${first} → ${third}` });
  await expect(table.getByRole('row', { name: /\/title/ })).toContainText('changed');
  await expect(table.getByRole('row', { name: /\/data\/heading\/ar/ })).toContainText('زورونا');
  await compare.getByRole('button', { name: `Restore revision ${first}` }).click();
  await expect(page.getByRole('button', { name: /^View Revision / })).toHaveCount(4);
  await expect(page.getByLabel('Title', { exact: true })).toHaveValue('Visit us');
  await expect(page.getByLabel('Heading · Arabic', { exact: true })).toHaveValue('');

  // A publish 8 s ahead, in the browser's own zone: the API publishes it within a second of that time.
  const due = await localTimeAhead(page, 8);
  await page.getByLabel('Publish at').fill(due.local);
  await page.getByRole('button', { name: 'Schedule the publish' }).click();
  await expect(page.getByRole('table', { name: 'Scheduled for this item' }).getByRole('row', { name: /PUBLISH/ })).toBeVisible();
  await expect(page.getByText('PUBLISHED', { exact: true }).first()).toBeVisible({ timeout: 30000 });
  const published = (await call(opsflow.api.url, 'GET', `/api/content/pages/${id}`, { token: editor })).body;
  const late = Date.parse(published.publishedAt) - due.ms;
  expect(late).toBeGreaterThanOrEqual(0);
  expect(late).toBeLessThanOrEqual(1000);

  // Visitors: the Arabic read takes the English heading, marked; the English read needs nothing.
  const arabic = page.getByRole('region', { name: 'Read in Arabic' });
  await expect(arabic.getByTestId('read-ar-heading')).toContainText('Visit us');
  await expect(arabic.getByTestId('read-ar-heading').getByTestId('fallback')).toHaveText('from the English');
  await expect(arabic.getByTestId('read-ar-body').getByTestId('fallback')).toHaveCount(0);
  await expect(page.getByRole('region', { name: 'Read in English' }).getByTestId('fallback')).toHaveCount(0);
  await checkScreen(page, 'content-form');
});

test('every type has its form: an ADMIN writes an approval chain of two stages, each a fieldset of its own (a role to choose, assignees as a list), with no JSON', async ({
  page,
  signIn,
  opsflow,
}) => {
  await signIn('admin');
  await page.goto(`${opsflow.api.url}/console/content/workflow-definitions`);
  await expect(page.getByRole('heading', { name: 'Content · workflow-definitions' })).toBeVisible();
  await page.getByLabel('Site', { exact: true }).fill('site-1');
  await page.getByLabel('Name', { exact: true }).first().fill('two-steps');
  const stages = page.getByRole('group', { name: 'Stages', exact: true });
  for (const [index, stage] of [
    { name: 'Editorial', role: 'MANAGER', assignees: '' },
    { name: 'Legal', role: 'ADMIN', assignees: 'lena, lou' },
  ].entries()) {
    await stages.getByRole('button', { name: 'Add to Stages' }).click();
    const fieldset = stages.getByRole('group', { name: `Stages ${index + 1}` });
    await fieldset.getByLabel('Name', { exact: true }).fill(stage.name);
    await fieldset.getByLabel('Role').selectOption(stage.role);
    if (stage.assignees) await fieldset.getByLabel('Assignees (comma-separated)').fill(stage.assignees);
  }
  await expect(page.getByText('(JSON)')).toHaveCount(0);
  await page.getByRole('button', { name: 'Create the draft' }).click();
  await expect(page.getByRole('heading', { name: 'two-steps' })).toBeVisible();
  const id = page.url().split('/').pop()!;
  const admin = await opsflow.tokenOf('admin');
  const saved = (await call(opsflow.api.url, 'GET', `/api/workflow/definitions/${id}`, { token: admin })).body;
  expect(saved.stages).toEqual([
    { name: 'Editorial', role: 'MANAGER' },
    { name: 'Legal', role: 'ADMIN', assignees: ['lena', 'lou'] },
  ]);
});

test("an ADMIN turns the site's locale fallback off and on again from the Content screen, and the site's setting is saved each time", async ({
  page,
  signIn,
  opsflow,
}) => {
  await signIn('admin');
  await page.goto(`${opsflow.api.url}/console/content/pages`);
  await page.getByLabel('Site', { exact: true }).fill('site-1');
  const fallback = page.getByRole('switch', { name: 'Public reads fall back to the other language' });
  await expect(fallback).toBeChecked();
  const admin = await opsflow.tokenOf('admin');
  const setting = async () => (await call(opsflow.api.url, 'GET', '/api/content/sites/site-1/settings', { token: admin })).body.localeFallback;
  await fallback.click();
  await expect(fallback).not.toBeChecked();
  expect(await setting()).toBe(false);
  await fallback.click();
  await expect(fallback).toBeChecked();
  expect(await setting()).toBe(true);
});

test('rich text written elsewhere is kept byte for byte: a heading clicked into and a class the editor would drop (opened as its source, saying why) survive an edit of another field', async ({
  page,
  signIn,
  opsflow,
}) => {
  const editor = await opsflow.tokenOf('editor');
  const body = { en: '<h2>Opening hours</h2>', ar: '<p class="lead">ساعات العمل</p>' };
  const created = await call(opsflow.api.url, 'POST', '/api/content/pages', {
    token: editor,
    body: { siteId: 'site-1', name: 'hours', slug: 'hours', title: 'Hours', data: { body } },
  });
  expect(created.status).toBe(201);
  await signIn('editor');
  await page.goto(`${opsflow.api.url}/console/content/pages/${created.body.id}`);
  // Exactly the page's name: once the editor has drawn the body, its <h2>Opening hours</h2> is a heading too
  // (a fresh-clone run met both).
  await expect(page.getByRole('heading', { name: 'hours', exact: true })).toBeVisible();
  await expect(page.getByLabel('Body · Arabic (HTML)')).toHaveValue(body.ar);
  await expect(page.getByText('Shown as its source: the visual editor would change some of its markup.')).toBeVisible();
  await page.getByRole('textbox', { name: 'Body · English', exact: true }).click();
  await page.getByLabel('Title', { exact: true }).fill('Hours this week');
  await page.getByLabel('What changed (kept with the revision)').fill('The title only');
  await page.getByRole('button', { name: 'Save as a new revision' }).click();
  await expect(page.getByRole('button', { name: /^View Revision / })).toHaveCount(2);
  const saved = (await call(opsflow.api.url, 'GET', `/api/content/pages/${created.body.id}`, { token: editor })).body;
  expect(saved.title).toBe('Hours this week');
  expect(saved.data.body).toEqual(body);
});
