import { checkScreen, expect, test } from './fixtures';

/** The health screen: each task queue's workers and backlog, and the last hour's emails, as an ADMIN sees them. */

test("an ADMIN's health screen shows every task queue with its workers, and the last hour's emails by channel and status", async ({
  page,
  signIn,
  opsflow,
}) => {
  // A failed email of this hour, written as the platform writes one, under a channel name of this test's own.
  await opsflow.platform
    .db('email.email_log')
    .insert({ site_id: 'site-1', recipient: 'health@example.test', status: 'FAILED', channel: 'health-check', attempts: 3 });

  await signIn('admin');
  await page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: 'Health' }).click();
  await expect(page.getByRole('heading', { name: 'Health', level: 2 })).toBeVisible();
  const queues = page.getByRole('table', { name: 'Task queues' });
  // The console's platform runs one worker on every queue: each kind of each queue has it polling.
  for (const queue of ['archival', 'deployments', 'messaging', 'approvals']) {
    for (const kind of ['workflow', 'activity']) {
      await expect(queues.getByRole('row').filter({ hasText: queue }).filter({ hasText: kind })).toHaveCount(1);
    }
  }
  await expect(queues.getByText('no worker')).toHaveCount(0);
  // The figures are read at most every 10 s, and the screen reads them again as often.
  const emails = page.getByRole('table', { name: 'Emails in the last hour' });
  await expect(emails.getByRole('row').filter({ hasText: 'health-check' }).filter({ hasText: 'FAILED' })).toContainText('1', { timeout: 30000 });
  await checkScreen(page, 'health');
});

test("a MANAGER has no health screen: the section is not shown, and opened by URL it shows the API's 403", async ({ page, signIn, opsflow }) => {
  await signIn('manager');
  await expect(page.getByRole('navigation', { name: 'Console sections' }).getByRole('link', { name: 'Health' })).toHaveCount(0);
  await page.goto(`${opsflow.api.url}/console/health`);
  await expect(page.getByTestId('problem-code')).toHaveText('FORBIDDEN');
});
