import http from 'node:http';
import { AddressInfo } from 'node:net';
import { createHmac } from 'node:crypto';
import { suppressAddress } from '../../data/messaging/suppressions';
import { checkScreen, expect, test } from './fixtures';

/**
 * Deliverability on the console: two email channels put in order, one of them rate-limited; a site's status
 * callback tried with a signed test event that a real receiver checks; a site's suppression list, an entry lifted.
 */

const SECRET = 'console-callback-secret-0123456789abcdef';

interface Heard {
  method: string;
  timestamp: string;
  signature: string;
  body: string;
}

/**
 * A status-callback receiver on the loopback, in the test's own process (the API runs there too): it answers
 * 200 and keeps what it heard. The outbound guard refuses loopback in production only; the test platform
 * runs the API with NODE_ENV=test.
 */
async function startReceiver() {
  const heard: Heard[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      heard.push({
        method: String(request.method),
        timestamp: String(request.headers['x-opsflow-timestamp']),
        signature: String(request.headers['x-opsflow-signature']),
        body,
      });
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/opsflow-status`,
    heard,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

test('two SMTP channels put in order and one rate-limited; a site’s status callback receives a signed test event; its secret is never shown', async ({
  page,
  signIn,
  opsflow,
}) => {
  const mail = opsflow.platform.info.mail;
  await signIn('admin');
  await page.getByRole('link', { name: 'Email and SMS channels' }).click();

  const email = page.getByRole('heading', { name: 'Email configurations' }).locator('..');
  const configs = page.getByRole('table', { name: 'Email configurations' });
  for (const name of ['relay-a', 'relay-b']) {
    await email.getByLabel('Name', { exact: true }).fill(name);
    await email.getByLabel('SMTP host').fill('127.0.0.1');
    await email.getByLabel('SMTP port').fill(String(mail.smtpPort));
    await email.getByLabel('SMTP user').fill('opsflow');
    await email.getByLabel('SMTP password (write-only)').fill('capture-password-7731');
    await email.getByLabel('Log in without TLS (a relay with no STARTTLS)').check();
    await email.getByRole('button', { name: 'Save the configuration' }).click();
    await expect(configs.getByRole('row', { name: new RegExp(name) })).toContainText('no limit');
  }

  // "Activate" leaves one active; "Add to the order" keeps it and tries the other after it.
  await configs.getByRole('button', { name: 'Activate relay-a' }).click();
  await expect(configs.getByRole('row', { name: /relay-a/ })).toContainText('ACTIVE');
  await configs.getByRole('button', { name: 'Add to the order: relay-b' }).click();
  const order = page.getByRole('table', { name: 'Email sending order' });
  const tried = order.locator('tbody tr');
  await expect(tried).toHaveText([/relay-a/, /relay-b/]);
  await expect(order.getByRole('button', { name: 'Move relay-a up' })).toBeDisabled();
  await order.getByRole('button', { name: 'Move relay-b up' }).click();
  await expect(tried).toHaveText([/relay-b/, /relay-a/]);
  await expect(configs.getByRole('row', { name: /relay-a/ })).toContainText('ACTIVE');
  await expect(configs.getByRole('row', { name: /relay-b/ })).toContainText('ACTIVE');

  // An edit replaces the configuration (its password kept, left empty) and leaves its place in the order alone.
  await configs.getByRole('button', { name: 'Edit relay-a' }).click();
  await expect(email.getByRole('heading', { name: 'Edit relay-a' })).toBeVisible();
  await email.getByLabel('Rate limit (messages per second)').fill('50');
  await email.getByLabel('Burst', { exact: true }).fill('10');
  await email.getByRole('button', { name: 'Save the configuration' }).click();
  await expect(email.getByRole('heading', { name: 'Add a configuration' })).toBeVisible();
  await expect(configs.getByRole('row', { name: /relay-a/ })).toContainText('50/s, burst 10');
  await expect(configs.getByRole('row', { name: /relay-a/ })).toContainText('a password is set');
  await expect(order.getByRole('row', { name: /relay-a/ })).toContainText('50/s, burst 10');
  await expect(order.getByRole('row', { name: /relay-b/ })).toContainText('no limit');
  await expect(tried).toHaveText([/relay-b/, /relay-a/]);
  await checkScreen(page, 'channels-in-order');

  const receiver = await startReceiver();
  try {
    const callbacks = page.getByRole('heading', { name: 'Status callbacks' }).locator('..');
    await callbacks.getByLabel('Site').fill('site-1');
    await expect(callbacks.getByText('No callback is set for this site.')).toBeVisible();
    await expect(callbacks.getByRole('button', { name: 'Send a test event' })).toBeDisabled();
    await callbacks.getByLabel('Callback URL').fill(receiver.url);
    await callbacks.getByLabel('Signing secret (write-only)').fill(SECRET);
    await callbacks.getByRole('button', { name: 'Save the callback' }).click();
    await expect(callbacks.getByText('A signing secret is set.')).toBeVisible();
    // Write-only: the secret is neither sent back nor left in the page once saved.
    expect(await page.content()).not.toContain(SECRET);
    await expect(callbacks.getByLabel('Callback URL')).toHaveValue(receiver.url);

    await callbacks.getByRole('button', { name: 'Send a test event' }).click();
    await expect(callbacks.getByTestId('callback-test')).toContainText('Delivered (200)');
    expect(receiver.heard).toHaveLength(1);
    const [event] = receiver.heard;
    expect(event.method).toBe('POST');
    // Checked as a receiver would: HMAC-SHA256 under the secret typed above, over `timestamp.body`.
    expect(event.signature).toBe(`sha256=${createHmac('sha256', SECRET).update(`${event.timestamp}.${event.body}`).digest('hex')}`);
    await checkScreen(page, 'status-callbacks');
  } finally {
    await receiver.close();
  }
});

test('a site’s suppression list: empty, then an entry a bounce put there, lifted, and shown again among the lifted ones', async ({ page, signIn, opsflow }) => {
  // Only a bounce or a complaint puts an address on the list (by SMTP, on BOUNCE_SMTP_PORT): the test writes the
  // entry as the bounce intake does.
  await suppressAddress(opsflow.platform.db, {
    siteId: 'site-bounced',
    address: 'Gone@Example.test',
    reason: 'hard-bounce',
    detail: '550 5.1.1 mailbox unavailable',
    logId: null,
  });
  await signIn('admin');
  await page.getByRole('link', { name: 'Suppression list' }).click();
  await expect(page.getByRole('heading', { name: 'Suppression list' })).toBeVisible();

  const list = page.getByRole('table', { name: 'Suppression list' });
  await page.getByLabel('Site').fill('site-quiet');
  await expect(list).toBeVisible();
  await expect(page.getByText('No address is suppressed in this site.')).toBeVisible();
  await expect(list.locator('tbody tr')).toHaveCount(0);

  await page.getByLabel('Site').fill('site-bounced');
  const entry = list.getByRole('row', { name: /gone@example.test/ });
  await expect(entry).toContainText('Hard bounce');
  await expect(entry).toContainText('550 5.1.1 mailbox unavailable');
  await checkScreen(page, 'suppressions');

  await entry.getByRole('button', { name: 'Lift gone@example.test' }).click();
  await expect(entry).toHaveCount(0);
  await expect(page.getByText('No address is suppressed in this site.')).toBeVisible();

  await page.getByLabel('Show lifted entries too').check();
  await expect(entry).toContainText('by ');
  await expect(entry.getByRole('button', { name: 'Lift gone@example.test' })).toHaveCount(0);
});
