import { platformWithApi } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { mailTo, publishedTemplate, smtpChannel } from './harness';

/** What one user can make the platform send or store: capped, and refused with nothing written. */
const thisFile = platformWithApi({
  apiDeps: (platform) => ({
    config: { ...platform.config, limits: { ...platform.config.limits, sendRateLimit: 10, sendRateWindowSeconds: 3600 } },
  }),
});
let editor: string;
let templateId: string;

beforeAll(async () => {
  await thisFile.platform.startWorker(['messaging', 'approvals']);
  const admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  editor = await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-l'] });
  await smtpChannel(thisFile.api.url, admin, 'capture', thisFile.platform.info.mail.smtpPort);
  for (const i of [1, 2, 3]) {
    await call(thisFile.api.url, 'POST', '/api/directory/users', {
      token: admin,
      body: { email: `limits-${i}@example.test`, name: `Reader ${i}`, roles: ['VIEWER'], siteIds: ['site-l'] },
    });
  }
  templateId = await publishedTemplate(thisFile.api.url, editor, 'site-l');
});

const logRows = () =>
  thisFile.platform
    .db('email.email_log')
    .count({ n: '*' })
    .first()
    .then((row) => Number((row as { n: string }).n));

test('a role send with 100 KiB of variables -> 413 PAYLOAD_TOO_LARGE: no batch, no row, no mail', async () => {
  const before = await logRows();
  const variables = { note: 'x'.repeat(100 * 1024) };
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/email/send/role', { token: editor, body: { templateId, roleKey: 'VIEWER', siteId: 'site-l', variables } }),
    413,
    'PAYLOAD_TOO_LARGE',
  );
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/email/send', { token: editor, body: { templateId, to: 'limits-1@example.test', siteId: 'site-l', variables } }),
    413,
    'PAYLOAD_TOO_LARGE',
  );
  expect(await logRows()).toBe(before);
  expect(await thisFile.platform.db('email.email_batch').count({ n: '*' }).first()).toEqual({ n: 0 });
  expect(await mailTo(thisFile.platform.info.mail.apiUrl, 'limits-1@example.test')).toEqual([]);
});

test("a bulk send stores its variables once, with its batch, not in every recipient's row", async () => {
  const variables = { team: 'Ops', note: 'y'.repeat(20 * 1024) };
  const sent = await call(thisFile.api.url, 'POST', '/api/email/send/role', {
    token: editor,
    body: { templateId, roleKey: 'VIEWER', siteId: 'site-l', variables },
  });
  expect(sent.status).toBe(202);
  expect(sent.body.recipients).toBe(3);
  expect(await thisFile.platform.db('email.email_batch').where({ batch_id: sent.body.batchId }).first('variables')).toEqual({ variables });
  expect(await thisFile.platform.db('email.email_log').where({ batch_id: sent.body.batchId }).whereNotNull('variables').count({ n: '*' }).first()).toEqual({
    n: 0,
  });
});

test("the 11th send within a user's limit -> 429 RATE_LIMITED with Retry-After: no row, nothing sent; another user still sends", async () => {
  // One bulk send above; nine single sends make ten.
  for (let i = 0; i < 9; i++) {
    expect(
      (await call(thisFile.api.url, 'POST', '/api/email/send', { token: editor, body: { templateId, to: `rate-${i}@example.test`, siteId: 'site-l' } })).status,
    ).toBe(202);
  }
  const before = await logRows();
  const eleventh = await call(thisFile.api.url, 'POST', '/api/email/send', {
    token: editor,
    body: { templateId, to: 'rate-over@example.test', siteId: 'site-l' },
  });
  expectProblem(eleventh, 429, 'RATE_LIMITED');
  expect(Number(eleventh.headers.get('retry-after'))).toBeGreaterThan(0);
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/email/send/role', { token: editor, body: { templateId, roleKey: 'VIEWER', siteId: 'site-l' } }),
    429,
    'RATE_LIMITED',
  );
  expect(await logRows()).toBe(before);
  expect(await thisFile.platform.db('email.email_log').where({ recipient: 'rate-over@example.test' })).toEqual([]);

  const other = await thisFile.platform.token({ sub: 'oda', roles: ['EDITOR'], sites: ['site-l'] });
  expect(
    (await call(thisFile.api.url, 'POST', '/api/email/send', { token: other, body: { templateId, to: 'rate-other@example.test', siteId: 'site-l' } })).status,
  ).toBe(202);
});

test('parallel sends cannot slip past the limit together', async () => {
  const racer = await thisFile.platform.token({ sub: 'rex', roles: ['EDITOR'], sites: ['site-l'] });
  const answers = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      call(thisFile.api.url, 'POST', '/api/email/send', { token: racer, body: { templateId, to: `race-${i}@example.test`, siteId: 'site-l' } }),
    ),
  );
  expect(answers.filter((answer) => answer.status === 202)).toHaveLength(10);
  expect(answers.filter((answer) => answer.status === 429)).toHaveLength(10);
});
