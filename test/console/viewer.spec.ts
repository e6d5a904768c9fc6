import { buildJar } from '../deploy/jars';
import { call } from '../support/http';
import { expect, test } from './fixtures';
import fs from 'node:fs';

/** Flow (e): a VIEWER sees no action buttons, and a forbidden action attempted by URL shows the API's 403. */

test("(e) a VIEWER reads content, releases and templates with no action button; screens and actions opened by URL show the API's 403", async ({
  page,
  signIn,
  opsflow,
}) => {
  const editor = await opsflow.tokenOf('editor');
  const created = await call(opsflow.api.url, 'POST', '/api/content/pages', {
    token: editor,
    body: { siteId: 'site-1', name: 'viewer-page', slug: 'viewer-page', title: 'Read me', data: {} },
  });
  expect(created.status).toBe(201);
  const template = await call(opsflow.api.url, 'POST', '/api/email/templates', {
    token: editor,
    body: { siteId: 'site-1', name: 'viewer-template', roleKey: null, subjectEn: 'Hi {{name}}', bodyEn: '<p>Hi</p>', subjectAr: 'أهلا', bodyAr: '<p>أهلا</p>' },
  });
  expect(template.status).toBe(201);

  await signIn('viewer');
  await expect(page.getByRole('navigation', { name: 'Console sections' }).getByRole('link')).toHaveText(['Content', 'Releases', 'Email templates']);
  // The shell's own buttons only: the language switch and sign-out.
  const actionButtons = () =>
    page
      .getByRole('main')
      .getByRole('button')
      // Reading controls stay: viewing a revision, and comparing two (nothing is changed by either).
      .filter({ hasNotText: /^(View|Compare)$/ });

  await page.getByRole('table', { name: 'Content: pages' }).getByRole('link', { name: 'viewer-page' }).click();
  await expect(page.getByRole('heading', { name: 'viewer-page' })).toBeVisible();
  await expect(page.getByTestId('read-only')).toBeVisible();
  await expect(page.getByRole('button', { name: /^View Revision / })).toHaveCount(1);
  await expect(actionButtons()).toHaveCount(0);

  // Releases are read, never made: no form, no button but the list's.
  await page.getByRole('link', { name: 'Releases' }).click();
  await expect(page.getByRole('table', { name: 'Releases' })).toBeVisible();
  await expect(page.getByTestId('read-only')).toBeVisible();
  await expect(actionButtons()).toHaveCount(0);

  await page.getByRole('link', { name: 'Email templates' }).click();
  await page.getByRole('table', { name: 'Email templates' }).getByRole('link', { name: 'viewer-template' }).click();
  await expect(page.getByRole('heading', { name: 'viewer-template' })).toBeVisible();
  await expect(page.getByLabel('Subject (English)')).toHaveAttribute('readonly', '');
  await expect(actionButtons()).toHaveCount(1);
  await expect(actionButtons()).toHaveAccessibleName('Refresh: Send logs');

  // Screens that are not a VIEWER's, opened by URL: the API refuses, and the console says so as the API words it.
  for (const screen of ['/console/services', '/console/services/settings', '/console/archiving', '/console/channels']) {
    await page.goto(`${opsflow.api.url}${screen}`);
    await expect(page.getByRole('alert').first(), screen).toContainText('Forbidden');
    await expect(page.getByTestId('problem-code').first(), screen).toHaveText('FORBIDDEN');
  }

  // An action by URL: the Deploy Service form opens, but what the JAR says, and the deploy itself, are refused.
  await page.goto(`${opsflow.api.url}/console/deploy`);
  const jar = await buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': 'spring.application.name=viewer-try\n' } });
  await page.locator('input[type=file]').setInputFiles({ name: 'viewer-try.jar', mimeType: 'application/java-archive', buffer: fs.readFileSync(jar) });
  await expect(page.getByTestId('problem-code')).toHaveText('FORBIDDEN');
  await page.getByRole('button', { name: 'Deploy', exact: true }).click();
  await expect(page.getByTestId('problem-code')).toHaveText(['FORBIDDEN', 'FORBIDDEN']);
  expect(await opsflow.platform.db('infra.service').where({ name: 'viewer-try' })).toEqual([]);
});
