import { platformWithApi } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { waitUntil } from '../support/wait';
import { publishedTemplate } from './harness';
import { startRelay, TestRelay } from './relay';

/**
 * Per-channel rate limits (messaging.md, third wave): a configuration limited to a few messages a second
 * takes a role send's messages no faster, whichever worker sends them. How close the pace is to the limit
 * is measured by `bench/email --rate`; this only checks that the limit is applied.
 */
const thisFile = platformWithApi();
let admin: string;
let editor: string;
let relay: TestRelay;
let limitedId: string;

beforeAll(async () => {
  // Two workers of the messaging queue: the limit is one for both.
  await thisFile.platform.startWorker(['messaging', 'approvals']);
  await thisFile.platform.startWorker(['messaging']);
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  editor = await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-r'] });
  relay = await startRelay();
});

afterAll(async () => {
  await relay?.close();
});

test('a rate limit is set on a configuration, within its bounds; bad values change nothing', async () => {
  const base = { configName: 'limited', transport: 'SMTP', smtpHost: '127.0.0.1', smtpPort: relay.port, isActive: true };
  expectProblem(await call(thisFile.api.url, 'POST', '/api/settings/email', { token: admin, body: { ...base, ratePerSecond: 0 } }), 400, 'VALIDATION_FAILED');
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/settings/email', { token: admin, body: { ...base, ratePerSecond: 5, burst: 0 } }),
    400,
    'VALIDATION_FAILED',
  );
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/settings/email', { token: admin, body: { ...base, ratePerSecond: 5, burst: 1.5 } }),
    400,
    'VALIDATION_FAILED',
  );
  expect((await call(thisFile.api.url, 'GET', '/api/settings/email', { token: admin })).body.items).toEqual([]);

  const created = await call(thisFile.api.url, 'POST', '/api/settings/email', { token: admin, body: { ...base, ratePerSecond: 5, burst: 1 } });
  expect(created.status).toBe(201);
  expect(created.body).toEqual(expect.objectContaining({ ratePerSecond: 5, burst: 1 }));
  limitedId = created.body.id;
});

test('a role send through a configuration limited to 5 a second, burst 1, by two workers: its messages go no faster', async () => {
  const count = 11;
  await thisFile.platform
    .db('directory.user')
    .insert(
      Array.from({ length: count }, (_, i) => ({ email: `paced${i}@rate.example`, name: `P ${i}`, locale: 'en', roles: ['VIEWER'], site_ids: ['site-r'] })),
    );
  const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-r');
  const asked = Date.now();
  const sent = await call(thisFile.api.url, 'POST', '/api/email/send/role', { token: editor, body: { templateId, roleKey: 'VIEWER', siteId: 'site-r' } });
  expect(sent.body.recipients).toBe(count);
  expect(await thisFile.platform.temporal.client.workflow.getHandle(sent.body.workflowId).result()).toEqual(
    expect.objectContaining({ done: true, delivered: count, failed: 0 }),
  );
  expect(relay.received.filter((to) => to.endsWith('@rate.example'))).toHaveLength(count);
  // The first goes at once (burst 1), then one each 200 ms: the eleventh cannot arrive before 2 s after the send
  // was asked for; unlimited, the eleven go within a few tens of milliseconds. Not a speed check: a floor the
  // limit sets. It is counted from the request, not from the first arrival: a first message slow to leave (its
  // connection opened after its turn, on a loaded machine) made the span from the first arrival 1,656 ms once.
  // Less 100 ms: the turns are booked on the database's clock, the arrivals on this process's.
  // And most gaps between arrivals are a turn long (unlimited they are a few milliseconds): the median of the
  // ten, which one or two late first messages cannot move.
  const times = relay.receivedAt.filter((_, i) => relay.received[i].endsWith('@rate.example'));
  const gaps = times
    .slice(1)
    .map((at, i) => at - times[i])
    .sort((a, b) => a - b);
  expect({ lastAfterAsked: times[times.length - 1] - asked >= 1900, medianGap: gaps[Math.floor(gaps.length / 2)] >= 150 }).toEqual({
    lastAfterAsked: true,
    medianGap: true,
  });
  // The pace is the configuration's, kept where every worker reads it.
  expect(await thisFile.platform.db('settings.channel_pace').where({ config_id: limitedId }).first()).toBeDefined();
  // A changed limit starts afresh: turns booked under the old one do not hold the new one back.
  const changed = await call(thisFile.api.url, 'PUT', `/api/settings/email/${limitedId}`, {
    token: admin,
    body: { configName: 'limited', transport: 'SMTP', smtpHost: '127.0.0.1', smtpPort: relay.port, ratePerSecond: 50, burst: 10 },
  });
  expect(changed.body).toEqual(expect.objectContaining({ ratePerSecond: 50, burst: 10 }));
  expect(await thisFile.platform.db('settings.channel_pace').where({ config_id: limitedId }).first()).toBeUndefined();
}, 120000);

test('a single send during a role send on a slow limit is not queued behind the whole batch: bulk sends book their turns only a little ahead', async () => {
  await call(thisFile.api.url, 'PUT', `/api/settings/email/${limitedId}`, {
    token: admin,
    body: { configName: 'limited', transport: 'SMTP', smtpHost: '127.0.0.1', smtpPort: relay.port, ratePerSecond: 0.5, burst: 1 },
  });
  const count = 12;
  await thisFile.platform
    .db('directory.user')
    .insert(
      Array.from({ length: count }, (_, i) => ({ email: `slow${i}@slow.example`, name: `S ${i}`, locale: 'en', roles: ['VIEWER'], site_ids: ['site-r'] })),
    );
  const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-r');
  const arrivedHere = () => relay.received.filter((to) => to.endsWith('@slow.example'));
  const sent = await call(thisFile.api.url, 'POST', '/api/email/send/role', { token: editor, body: { templateId, roleKey: 'VIEWER', siteId: 'site-r' } });
  expect(sent.body.recipients).toBeGreaterThanOrEqual(count);
  await waitUntil('the role send under way', () => arrivedHere().length >= 1, { timeoutMs: 60000 });

  const single = await call(thisFile.api.url, 'POST', '/api/email/send', {
    token: editor,
    body: { templateId, to: 'single@slow.example', siteId: 'site-r', variables: { user: { name: 'One' }, orders: [{ id: 1 }] } },
  });
  expect(single.status).toBe(202);
  await waitUntil('the single send arrived', () => arrivedHere().includes('single@slow.example'), { timeoutMs: 60000 });
  // Twelve bulk messages at one every 2 s: behind the whole batch, the single one would come last. Bulk
  // turns are booked 2 s ahead at most, so it comes within the first few.
  expect(arrivedHere().indexOf('single@slow.example')).toBeLessThan(5);
  const log = await thisFile.platform
    .db('email.email_log')
    .where({ id: Number(single.body.logId) })
    .first();
  await waitUntil('its row recorded', async () =>
    (await thisFile.platform.db('email.email_log').where({ id: log.id }).first()).status === 'SUCCESS' ? true : null,
  );
  expect((await thisFile.platform.db('email.email_log').where({ id: log.id }).first()).attempts).toBe(1);
}, 180000);
