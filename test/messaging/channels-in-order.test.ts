import { platformWithApi, RunningWorker } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { waitUntil } from '../support/wait';
import { finalLog, publishedTemplate } from './harness';
import { startRelay, TestRelay } from './relay';

/**
 * Several active email configurations, tried in order (messaging.md, third wave): two real SMTP relays on
 * loopback, the first stopped in the middle of a role send.
 */
const thisFile = platformWithApi();
let worker: RunningWorker;
let admin: string;
let editor: string;
let primary: TestRelay;
let secondary: TestRelay;
let primaryId: string;
let secondaryId: string;

const address = (local: string) => `${local}@in-order.example`;
const REFUSED = address('gone');
/** The first relay takes this one's message whole and never answers: the worker is killed meanwhile. */
const HELD = address('held');

beforeAll(async () => {
  worker = await thisFile.platform.startWorker(['messaging', 'approvals']);
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  editor = await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-f'] });
  primary = await startRelay({ refuses: (to) => to === REFUSED, holds: (to) => to === HELD });
  secondary = await startRelay();
  const create = async (configName: string, smtpPort: number) =>
    (
      await call(thisFile.api.url, 'POST', '/api/settings/email', {
        token: admin,
        body: { configName, transport: 'SMTP', smtpHost: '127.0.0.1', smtpPort },
      })
    ).body.id as string;
  primaryId = await create('primary', primary.port);
  secondaryId = await create('secondary', secondary.port);
});

afterAll(async () => {
  await primary?.close();
  await secondary?.close();
});

test('PUT …/order makes exactly those configurations active, in that order; activate makes one the only active again', async () => {
  const ordered = await call(thisFile.api.url, 'PUT', '/api/settings/email/order', { token: admin, body: { ids: [secondaryId, primaryId] } });
  expect(ordered.status).toBe(200);
  expect(
    ordered.body.items.map((item: { configName: string; isActive: boolean; priority: number }) => [item.configName, item.isActive, item.priority]),
  ).toEqual([
    ['secondary', true, 0],
    ['primary', true, 1],
  ]);
  expectProblem(
    await call(thisFile.api.url, 'PUT', '/api/settings/email/order', { token: admin, body: { ids: [primaryId, '6f9619ff-8b86-4d01-b42d-00cf4fc964ff'] } }),
    404,
    'NOT_FOUND',
  );
  // Refused whole: the order before it stands.
  expect((await call(thisFile.api.url, 'GET', `/api/settings/email/${secondaryId}`, { token: admin })).body).toEqual(
    expect.objectContaining({ isActive: true, priority: 0 }),
  );
  expectProblem(await call(thisFile.api.url, 'PUT', '/api/settings/email/order', { token: editor, body: { ids: [primaryId] } }), 403, 'FORBIDDEN');

  await call(thisFile.api.url, 'POST', `/api/settings/email/${secondaryId}/activate`, { token: admin });
  expect((await call(thisFile.api.url, 'GET', `/api/settings/email/${primaryId}`, { token: admin })).body.isActive).toBe(false);

  await call(thisFile.api.url, 'PUT', '/api/settings/email/order', { token: admin, body: { ids: [primaryId, secondaryId] } });
});

test('the first relay stopped in the middle of a role send: every message arrives once, the rest through the second, each row naming the relay that took it', async () => {
  const count = 600;
  const recipient = (i: number) => address(`r${i}`);
  await thisFile.platform
    .db('directory.user')
    .insert(Array.from({ length: count }, (_, i) => ({ email: recipient(i), name: `R ${i}`, locale: 'en', roles: ['VIEWER'], site_ids: ['site-f'] })));
  const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-f');
  const sent = await call(thisFile.api.url, 'POST', '/api/email/send/role', { token: editor, body: { templateId, roleKey: 'VIEWER', siteId: 'site-f' } });
  expect(sent.body.recipients).toBe(count);

  await waitUntil('a part of the batch through the first relay', () => primary.received.length >= 50, { timeoutMs: 60000, intervalMs: 20 });
  await primary.close();
  const result = await thisFile.platform.temporal.client.workflow.getHandle(sent.body.workflowId).result();
  expect(result).toEqual(expect.objectContaining({ done: true, failed: 0 }));

  const rows: Array<{ recipient: string; status: string; channel: string }> = await thisFile.platform
    .db('email.email_log')
    .where({ batch_id: sent.body.batchId })
    .select('recipient', 'status', 'channel');
  expect(rows.filter((row) => row.status !== 'SUCCESS')).toEqual([]);
  const arrived = [...primary.received, ...secondary.received].filter((to) => to.endsWith('@in-order.example'));
  expect(arrived.length).toBe(count);
  expect(new Set(arrived).size).toBe(count);
  const through = (name: string) =>
    rows
      .filter((row) => row.channel === name)
      .map((row) => row.recipient)
      .sort();
  expect(through('primary')).toEqual(primary.received.filter((to) => to.endsWith('@in-order.example')).sort());
  expect(through('secondary')).toEqual(secondary.received.filter((to) => to.endsWith('@in-order.example')).sort());
  expect(through('secondary').length).toBeGreaterThan(0);
}, 300000);

test('with the first relay down, a single send goes through the second at its first attempt', async () => {
  const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-f');
  const sent = await call(thisFile.api.url, 'POST', '/api/email/send', {
    token: editor,
    body: { templateId, to: address('single'), siteId: 'site-f', variables: { user: { name: 'S' }, orders: [{ id: 1 }] } },
  });
  expect(await finalLog(thisFile.api.url, editor, templateId, sent.body.logId)).toEqual(
    expect.objectContaining({ status: 'SUCCESS', attempts: 1, channel: 'secondary' }),
  );
  expect(secondary.received.filter((to) => to === address('single'))).toHaveLength(1);

  const processed = await call(thisFile.api.url, 'POST', '/api/settings/communication/process', {
    token: admin,
    body: { channel: 'EMAIL', siteId: 'site-f', to: address('direct'), subject: 'Hi', content: '<p>Hi</p>' },
  });
  expect(processed.body).toEqual({ status: 'SUCCESS', detail: 'sent' });
  expect(secondary.received.filter((to) => to === address('direct'))).toHaveLength(1);
});

test('a recipient the first relay refuses with 550 is not tried on the second: the row ends FAILED', async () => {
  await primary.reopen();
  const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-f');
  const sent = await call(thisFile.api.url, 'POST', '/api/email/send', {
    token: editor,
    body: { templateId, to: REFUSED, siteId: 'site-f', variables: { user: { name: 'G' }, orders: [{ id: 1 }] } },
  });
  expect(await finalLog(thisFile.api.url, editor, templateId, sent.body.logId)).toEqual(
    expect.objectContaining({ status: 'FAILED', attempts: 1, channel: null, error: expect.stringMatching(/^SMTP 550/) }),
  );
  expect(secondary.received.filter((to) => to === REFUSED)).toEqual([]);
});

test('a worker killed while the first relay has the message and before its row is written: the message never goes through the second relay', async () => {
  const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-f');
  const sent = await call(thisFile.api.url, 'POST', '/api/email/send', {
    token: editor,
    body: { templateId, to: HELD, siteId: 'site-f', variables: { user: { name: 'H' }, orders: [{ id: 1 }] } },
  });
  expect(sent.status).toBe(202);
  expect(await primary.held).toBe(HELD);
  await worker.kill();
  // The first relay is gone too: the second is up, and the message is still never sent through it.
  await primary.close();
  worker = await thisFile.platform.startWorker(['messaging', 'approvals']);

  // The killed attempt times out (a minute), and the retries go to the first relay alone until they are spent.
  const failed = await finalLog(thisFile.api.url, editor, templateId, sent.body.logId);
  expect(failed).toEqual(
    expect.objectContaining({
      status: 'FAILED',
      deliveryStatus: 'temporary-failure',
      attempts: 4,
      channel: null,
      error: expect.stringMatching(/ECONNREFUSED|connect/i),
    }),
  );
  expect(secondary.received).not.toContain(HELD);
  expect(primary.received.filter((to) => to === HELD)).toHaveLength(1);
  await primary.reopen();
}, 300000);
