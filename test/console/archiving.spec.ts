import fs from 'node:fs';
import { csvIds, remainingIds, seedEmailLogs } from '../archival/seed';
import { checkScreen, expect, test } from './fixtures';

/** Flow (b): a retention policy is saved, a run archives the seeded rows, and the archive file downloads. */

test('(b) a retention policy saved on Governance → Archiving; a dry run, then a run archives the old rows with live progress; the archive file downloads', async ({
  signIn,
  opsflow,
}) => {
  const { db } = opsflow.platform;
  const old = await seedEmailLogs(db, { siteId: 'site-arch', count: 4, ageDays: 40 });
  const recent = await seedEmailLogs(db, { siteId: 'site-arch', count: 2, ageDays: 5 });
  const page = await signIn('admin');
  await page.getByRole('link', { name: 'Governance → Archiving' }).click();
  await expect(page.getByRole('heading', { name: 'Governance → Archiving' })).toBeVisible();

  // The API's validation message, beside the field it is about; nothing is saved.
  await page.getByLabel('Site (blank: the global policy)').fill('site-arch');
  await page.getByLabel('Retention (days)').fill('0');
  await page.getByRole('button', { name: 'Add policy' }).click();
  await expect(page.getByText('must be >= 1')).toBeVisible();
  await expect(page.getByRole('table', { name: 'Retention policies' }).getByRole('row')).toHaveCount(1);
  await page.getByLabel('Retention (days)').fill('30');
  await page.getByRole('button', { name: 'Add policy' }).click();
  const saved = page.getByRole('table', { name: 'Retention policies' }).getByRole('row', { name: /EMAIL_LOG site-arch 30/ });
  await expect(saved).toBeVisible();
  await saved.getByRole('button', { name: 'Disable EMAIL_LOG site-arch' }).click();
  await expect(saved.getByRole('button', { name: 'Enable EMAIL_LOG site-arch' })).toBeVisible();
  await saved.getByRole('button', { name: 'Enable EMAIL_LOG site-arch' }).click();
  await expect(saved.getByRole('button', { name: 'Disable EMAIL_LOG site-arch' })).toBeVisible();
  // The archive format: the platform's unless the policy names one; named Parquet, then given back to the platform.
  await expect(saved).toHaveText(/EMAIL_LOG\s*site-arch\s*30\s*—/);
  for (const [option, shown] of [
    ['Parquet (zstd)', 'parquet'],
    ["the platform's (ARCHIVE_FORMAT)", '—'],
  ] as const) {
    await saved.getByRole('button', { name: 'Edit EMAIL_LOG site-arch' }).click();
    const dialog = page.getByRole('dialog', { name: 'Edit the policy' });
    await dialog.getByLabel('Archive format').selectOption({ label: option });
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect(dialog).toBeHidden();
    await expect(saved.getByRole('cell').nth(3)).toHaveText(shown);
  }
  // The sink: S3 with no store named and none configured is refused with the API's reason, and nothing changes;
  // a store of its own is saved with its keys, the secret never shown again; then back to the platform's.
  const secret = 'console-secret-0a9f7c2e';
  await saved.getByRole('button', { name: 'Edit EMAIL_LOG site-arch' }).click();
  let dialog = page.getByRole('dialog', { name: 'Edit the policy' });
  await dialog.getByLabel('Archive sink').selectOption({ label: 'S3-compatible store' });
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog.getByText(/none is configured \(ARCHIVE_S3_ENDPOINT\)/)).toBeVisible();
  await dialog.getByLabel("Endpoint (blank: the platform's store, ARCHIVE_S3_*)").fill('http://127.0.0.1:9');
  await dialog.getByLabel('Bucket').fill('console-archive');
  await dialog.getByLabel('Prefix (ends with /)').fill('arch/');
  await dialog.getByLabel('Access key id').fill('console-key');
  await dialog.getByLabel('Secret access key').fill(secret);
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog).toBeHidden();
  await expect(saved.getByRole('cell').nth(4)).toHaveText('s3 · console-archive @ 127.0.0.1:9 / arch/');
  await saved.getByRole('button', { name: 'Edit EMAIL_LOG site-arch' }).click();
  dialog = page.getByRole('dialog', { name: 'Edit the policy' });
  await expect(dialog.getByLabel('Access key id')).toHaveValue('console-key');
  await expect(dialog.getByLabel('Secret access key')).toHaveValue('');
  await expect(dialog.getByLabel('Secret access key')).toHaveAttribute('placeholder', 'Stored: leave blank to keep it');
  expect(await page.content()).not.toContain(secret);
  await dialog.getByLabel('Archive sink').selectOption({ label: "the platform's (ARCHIVE_SINK)" });
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog).toBeHidden();
  await expect(saved.getByRole('cell').nth(4)).toHaveText('—');

  const resolve = page.getByRole('heading', { name: 'Which policy applies to a site?' }).locator('..');
  await resolve.getByLabel('Site').fill('site-arch');
  await resolve.getByRole('button', { name: 'Resolve' }).click();
  await expect(page.getByTestId('resolved')).toHaveText('Applies: 30 days (from SITE)');
  await checkScreen(page, 'archiving');

  const run = page.getByRole('heading', { name: 'Run an archive' }).locator('..');
  await run.getByLabel('Log type').selectOption('EMAIL_LOG');
  await run.getByLabel('Site').fill('site-arch');
  await run.getByLabel('Dry run (count only: nothing is exported or deleted)').check();
  await run.getByRole('button', { name: 'Run now' }).click();
  await expect(page.getByTestId('archive-run')).toHaveAttribute('data-status', 'COMPLETED', { timeout: 60000 });
  await expect(page.getByRole('table', { name: 'Run EMAIL_LOG' }).getByRole('row', { name: /site-arch/ })).toContainText('DRY_RUN');
  expect(await remainingIds(db, 'site-arch')).toEqual([...old, ...recent]);

  await run.getByLabel('Dry run (count only: nothing is exported or deleted)').uncheck();
  await run.getByRole('button', { name: 'Run now' }).click();
  const siteRow = page.getByRole('table', { name: 'Run EMAIL_LOG' }).getByRole('row', { name: /site-arch/ });
  await expect(siteRow).toContainText('DONE', { timeout: 60000 });
  // Site, state, cutoff, rows exported, rows deleted.
  await expect(siteRow.getByRole('cell').nth(3)).toHaveText('4');
  await expect(siteRow.getByRole('cell').nth(4)).toHaveText('4');
  await expect(page.getByTestId('archive-run').getByRole('link', { name: 'Open the run in the Temporal Web UI' })).toHaveAttribute(
    'href',
    /\/workflows\/archive%3AEMAIL_LOG\//,
  );
  expect(await remainingIds(db, 'site-arch')).toEqual(recent);

  await page.getByLabel('Archive files of a site').fill('site-arch');
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  const files = page.getByRole('table', { name: 'Archive files: site-arch' });
  await expect(files.getByRole('row')).toHaveCount(2);
  const [downloaded] = await Promise.all([page.waitForEvent('download'), files.getByRole('button', { name: /^Download / }).click()]);
  expect(downloaded.suggestedFilename()).toMatch(/\.csv$/);
  expect(csvIds(fs.readFileSync(await downloaded.path(), 'utf8'))).toEqual(old);

  const history = page.getByRole('table', { name: 'Run history' });
  await page.getByRole('button', { name: 'Refresh: Run history' }).click();
  await expect(history.getByRole('row', { name: /site-arch/ }).first()).toBeVisible();
});
