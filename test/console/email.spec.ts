import { mailTo } from '../messaging/harness';
import { waitUntil } from '../support/wait';
import { checkScreen, expect, test } from './fixtures';

/**
 * Flow (d): an Arabic template previews right to left and a test send arrives in the mail capture; the
 * channel it goes through is set up, validated and activated on the channels screen, password write-only.
 */

test('(d) an SMTP channel set up and validated; an Arabic template previews right to left with its missing variables flagged; a test send arrives in the mail capture', async ({
  page,
  signIn,
  opsflow,
}) => {
  const mail = opsflow.platform.info.mail;
  await signIn('admin');

  await page.getByRole('link', { name: 'Email and SMS channels' }).click();
  const email = page.getByRole('heading', { name: 'Email configurations' }).locator('..');
  await email.getByLabel('Name', { exact: true }).fill('mail-capture');
  await email.getByLabel('SMTP host').fill('127.0.0.1');
  await email.getByLabel('SMTP port').fill(String(mail.smtpPort));
  await email.getByLabel('SMTP user').fill('opsflow');
  await email.getByLabel('SMTP password (write-only)').fill('capture-password-7731');
  // The mail capture offers no usable TLS: logging in on it in clear is said, never done by default.
  await email.getByLabel('Log in without TLS (a relay with no STARTTLS)').check();
  await email.getByRole('button', { name: 'Save the configuration' }).click();
  const row = page.getByRole('table', { name: 'Email configurations' }).getByRole('row', { name: /mail-capture/ });
  await expect(row).toContainText('a password is set');
  await row.getByRole('button', { name: 'Activate mail-capture' }).click();
  await expect(row).toContainText('ACTIVE');
  await row.getByRole('button', { name: 'Validate mail-capture' }).click();
  await expect(row.getByTestId('validated')).toContainText('Reachable');
  // Write-only: the password is never sent back to the console.
  expect(await page.content()).not.toContain('capture-password-7731');
  await checkScreen(page, 'channels');

  await page.getByRole('link', { name: 'Email templates' }).click();
  await page.getByLabel('Site').fill('site-1');
  await page.getByLabel('New template: Name').fill('welcome-console');
  await page.getByRole('button', { name: 'Create the draft' }).click();
  await expect(page.getByRole('table', { name: 'Email templates' }).getByRole('link', { name: 'welcome-console' })).toBeVisible();
  await checkScreen(page, 'email-templates');
  await page.getByRole('table', { name: 'Email templates' }).getByRole('link', { name: 'welcome-console' }).click();
  await page.getByLabel('Subject (English)').fill('Welcome {{user.name}}');
  await page.getByLabel('Body (HTML) (English)').fill('<p>Hello {{user.name}}</p>');
  await page.getByLabel('Subject (Arabic)').fill('أهلا {{user.name}}');
  await page.getByLabel('Body (HTML) (Arabic)').fill('<p>مرحبا {{user.name}}، طلبك {{order.id}} جاهز</p>');
  expect(await page.getByLabel('Subject (Arabic)').evaluate((input) => getComputedStyle(input).direction)).toBe('rtl');
  expect(await page.getByLabel('Subject (English)').evaluate((input) => getComputedStyle(input).direction)).toBe('ltr');
  await expect(page.getByLabel('Variables')).toContainText('{{order.id}}');
  await expect(page.getByLabel('Variables')).toContainText('{{user.name}}');
  await page.getByRole('button', { name: 'Save as a new draft' }).click();
  await page.getByRole('button', { name: 'Publish' }).click();
  await expect(page.getByText('PUBLISHED', { exact: true })).toBeVisible();

  // Arabic is the preview's default; a blank sample is a missing variable, flagged.
  await page.getByLabel('Sample value of user.name').fill('سارة');
  await page.getByRole('button', { name: 'Render the preview' }).click();
  const preview = page.getByTestId('template-preview');
  await expect(preview).toHaveAttribute('data-dir', 'rtl');
  await expect(page.getByTestId('preview-subject')).toHaveText('أهلا سارة');
  expect(await page.getByTestId('preview-subject').evaluate((element) => getComputedStyle(element).direction)).toBe('rtl');
  await expect(page.getByLabel('Missing variables')).toContainText('order.id');
  const rendered = page.frameLocator('iframe[title="Rendered email"]');
  await expect(rendered.locator('body')).toContainText('مرحبا سارة');
  expect(await rendered.locator('html').getAttribute('dir')).toBe('rtl');
  await page.getByLabel('Sample value of order.id').fill('A-17');
  await page.getByRole('button', { name: 'Render the preview' }).click();
  await expect(page.getByLabel('Missing variables')).toHaveCount(0);
  await checkScreen(page, 'email-template');

  await page.getByLabel('To', { exact: true }).fill('reader@example.test');
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  await expect(page.getByText(/^Queued: /)).toBeVisible();
  const arrived = await waitUntil(
    'the test send in the mail capture',
    async () => (await mailTo(mail.apiUrl, 'reader@example.test')).find((message) => message.subject === 'أهلا سارة'),
    { timeoutMs: 60000 },
  );
  expect(arrived.html).toContain('مرحبا سارة، طلبك A-17 جاهز');
  expect(arrived.html).toContain('dir="rtl"');

  const logs = page.getByRole('table', { name: 'Send logs' });
  await expect(async () => {
    await page.getByRole('button', { name: 'Refresh: Send logs' }).click();
    await expect(logs.getByRole('row', { name: /reader@example.test/ })).toContainText('SUCCESS', { timeout: 1000 });
  }).toPass({ timeout: 30000 });
});
