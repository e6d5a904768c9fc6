import os from 'node:os';
import path from 'node:path';
import { platformWithApi, RunningWorker } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { freePort } from '../support/slots';
import { startMailCapture } from '../../scripts/platform/mail-capture';
import { waitUntil } from '../support/wait';
import { capturedCount, finalLog, mailTo, publishedTemplate, smtpChannel } from './harness';
import { recordHistory } from '../support/histories';
import { fairShareOfRun } from '../support/fair-share';
import { PRIORITY } from '../../domain/fairness';

const thisFile = platformWithApi();
let worker: RunningWorker;
let admin: string;
let editor: string;
let mailApi: string;
let captureConfigId: string;

beforeAll(async () => {
  worker = await thisFile.platform.startWorker(['messaging', 'approvals']);
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  editor = await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-m', 'site-k'] });
  mailApi = thisFile.platform.info.mail.apiUrl;
});

// Addresses unique to this file: the mail capture server is shared by the whole run.
const address = (local: string) => `${local}@send-test.example`;

async function activateCapture() {
  return (await smtpChannel(thisFile.api.url, admin, 'capture', thisFile.platform.info.mail.smtpPort)).id;
}

test('no active configuration -> 409 NO_ACTIVE_CONFIG, and no log row is written', async () => {
  const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-m');
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/email/send', { token: editor, body: { templateId, to: address('nobody'), siteId: 'site-m' } }),
    409,
    'NO_ACTIVE_CONFIG',
  );
  expect(Number(((await thisFile.platform.db('email.email_log').count({ n: '*' }).first()) as { n: string | number }).n)).toBe(0);
  captureConfigId = await activateCapture();
});

test('an English and an Arabic send reach the mail capture rendered; each log goes PENDING -> SUCCESS', async () => {
  const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-m');
  const variables = { user: { name: 'Sam <b>&</b>' }, orders: [{ id: 'A-17' }] };
  const sentEn = await call(thisFile.api.url, 'POST', '/api/email/send', {
    token: editor,
    body: { templateId, to: address('sam'), siteId: 'site-m', variables },
  });
  expect(sentEn.status).toBe(202);
  expect(sentEn.body).toEqual({
    logId: expect.any(String),
    status: 'PENDING',
    workflowId: `email:${sentEn.body.logId}`,
    runId: expect.any(String),
    uiUrl: expect.any(String),
  });
  const sentAr = await call(thisFile.api.url, 'POST', '/api/email/send', {
    token: editor,
    body: { templateId, to: address('salma'), siteId: 'site-m', locale: 'ar', variables: { user: { name: 'سلمى' } } },
  });

  const logEn = await finalLog(thisFile.api.url, editor, templateId, sentEn.body.logId);
  await recordHistory(thisFile.platform.temporal, { workflowId: sentEn.body.workflowId, runId: sentEn.body.runId, name: 'email-sent' });
  expect(logEn).toEqual(
    expect.objectContaining({ status: 'SUCCESS', recipient: address('sam'), locale: 'en', attempts: 1, missingVariables: [], error: null }),
  );
  const [en] = await waitUntil('the English mail', async () => (await mailTo(mailApi, address('sam'))).length === 1 && mailTo(mailApi, address('sam')));
  expect(en.subject).toBe('Welcome Sam <b>&</b>');
  expect(en.html).toContain('Hello Sam &lt;b&gt;&amp;&lt;/b&gt;, your order A-17 is ready.');

  const logAr = await finalLog(thisFile.api.url, editor, templateId, sentAr.body.logId);
  expect(logAr).toEqual(expect.objectContaining({ status: 'SUCCESS', locale: 'ar', missingVariables: [] }));
  const [ar] = await waitUntil('the Arabic mail', async () => (await mailTo(mailApi, address('salma'))).length === 1 && mailTo(mailApi, address('salma')));
  expect(ar.subject).toBe('أهلا سلمى');
  expect(ar.html).toContain('<div dir="rtl" lang="ar"><p>مرحبا سلمى</p></div>');
});

test("a single send's run is started at urgent priority and a bulk send's at bulk priority, each under its site's fairness key (decision 046)", async () => {
  const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-m');
  const single = await call(thisFile.api.url, 'POST', '/api/email/send', { token: editor, body: { templateId, to: address('fair'), siteId: 'site-m' } });
  const bulk = await call(thisFile.api.url, 'POST', '/api/email/send/role', { token: editor, body: { templateId, roleKey: 'VIEWER', siteId: 'site-m' } });
  expect([single.status, bulk.status]).toEqual([202, 202]);
  expect(await fairShareOfRun(thisFile.platform.temporal, single.body.workflowId)).toEqual({ priorityKey: PRIORITY.urgent, fairnessKey: 'site-m' });
  expect(await fairShareOfRun(thisFile.platform.temporal, bulk.body.workflowId)).toEqual({ priorityKey: PRIORITY.bulk, fairnessKey: 'site-m' });
});

test('a missing variable renders empty and is logged; CR/LF in a variable never reaches a header', async () => {
  const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-m');
  const sent = await call(thisFile.api.url, 'POST', '/api/email/send', {
    token: editor,
    body: { templateId, to: address('crlf'), siteId: 'site-m', variables: { user: { name: 'Eve\r\nBcc: victim@example.test\r\nX-Injected: 1' } } },
  });
  const log = await finalLog(thisFile.api.url, editor, templateId, sent.body.logId);
  expect(log).toEqual(expect.objectContaining({ status: 'SUCCESS', missingVariables: ['orders.0.id'] }));
  const [mail] = await waitUntil('the mail', async () => (await mailTo(mailApi, address('crlf'))).length === 1 && mailTo(mailApi, address('crlf')));
  expect(mail.subject).toBe('Welcome Eve Bcc: victim@example.test X-Injected: 1');
  expect(Object.keys(mail.headers).map((name) => name.toLowerCase())).not.toContain('x-injected');
  expect(mail.to.map((to) => to.address)).toEqual([address('crlf')]);
  expect(await mailTo(mailApi, 'victim@example.test')).toEqual([]);
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/email/send', {
      token: editor,
      body: { templateId, to: `${address('x')}\r\nBcc: victim@example.test`, siteId: 'site-m' },
    }),
    400,
    'VALIDATION_FAILED',
  );
});

test('bad input: unknown template 404, unpublished 409, a sender without the role 403, another site 403', async () => {
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/email/send', {
      token: editor,
      body: { templateId: '00000000-0000-4000-8000-000000000000', to: address('a'), siteId: 'site-m' },
    }),
    404,
    'NOT_FOUND',
  );
  const draft = await call(thisFile.api.url, 'POST', '/api/email/templates', {
    token: editor,
    body: { siteId: 'site-m', name: 'draft', roleKey: null, subjectEn: 's', bodyEn: 'b', subjectAr: 's', bodyAr: 'b' },
  });
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/email/send', { token: editor, body: { templateId: draft.body.id, to: address('a'), siteId: 'site-m' } }),
    409,
    'TEMPLATE_NOT_PUBLISHED',
  );
  const managersOnly = await publishedTemplate(thisFile.api.url, editor, 'site-m', { roleKey: 'MANAGER' });
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/email/send', { token: editor, body: { templateId: managersOnly, to: address('a'), siteId: 'site-m' } }),
    403,
    'FORBIDDEN',
  );
  const manager = await thisFile.platform.token({ sub: 'max', roles: ['MANAGER'], sites: ['site-m'] });
  expect(
    (await call(thisFile.api.url, 'POST', '/api/email/send', { token: manager, body: { templateId: managersOnly, to: address('a'), siteId: 'site-m' } }))
      .status,
  ).toBe(202);
  const outsider = await thisFile.platform.token({ sub: 'oz', roles: ['EDITOR'], sites: ['site-z'] });
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/email/send', { token: outsider, body: { templateId: managersOnly, to: address('a'), siteId: 'site-m' } }),
    403,
    'FORBIDDEN',
  );
});

test("the role restriction is the published revision's: a draft that drops the role does not open the template to an editor", async () => {
  const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-m', { roleKey: 'MANAGER' });
  // The editor edits the draft to drop the restriction, but does not publish it.
  const draft = await call(thisFile.api.url, 'PUT', `/api/email/templates/${templateId}`, {
    token: editor,
    body: { name: 'welcome', roleKey: null, subjectEn: 'Welcome', bodyEn: '<p>Hello</p>', subjectAr: 'أهلا', bodyAr: '<p>مرحبا</p>' },
  });
  expect(draft.status).toBe(200);
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/email/send', { token: editor, body: { templateId, to: address('draft-role'), siteId: 'site-m' } }),
    403,
    'FORBIDDEN',
  );
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/email/send/role', { token: editor, body: { templateId, roleKey: 'EDITOR', siteId: 'site-m' } }),
    403,
    'FORBIDDEN',
  );
  // And the other way: a draft that adds a role restriction does not bind what is published.
  const open = await publishedTemplate(thisFile.api.url, editor, 'site-m');
  await call(thisFile.api.url, 'PUT', `/api/email/templates/${open}`, {
    token: editor,
    body: { name: 'welcome', roleKey: 'ADMIN', subjectEn: 'Welcome', bodyEn: '<p>Hello</p>', subjectAr: 'أهلا', bodyAr: '<p>مرحبا</p>' },
  });
  expect(
    (await call(thisFile.api.url, 'POST', '/api/email/send', { token: editor, body: { templateId: open, to: address('draft-role'), siteId: 'site-m' } }))
      .status,
  ).toBe(202);
});

test('a bulk send by role reaches every directory user with the role in that site, once, in their own locale, and no one else', async () => {
  const users = [
    { email: address('m1'), name: 'Mona', locale: 'en', roles: ['MANAGER'], siteIds: ['site-m'] },
    { email: address('m2'), name: 'مازن', locale: 'ar', roles: ['MANAGER', 'EDITOR'], siteIds: ['site-m', 'site-x'] },
    { email: address('m3'), name: 'Mia', locale: 'en', roles: ['MANAGER'], siteIds: ['site-x'] },
    { email: address('e1'), name: 'Ed', locale: 'en', roles: ['EDITOR'], siteIds: ['site-m'] },
  ];
  for (const user of users) expect((await call(thisFile.api.url, 'POST', '/api/directory/users', { token: admin, body: user })).status).toBe(201);
  const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-m', {
    subjectEn: 'Hi {{team}}',
    subjectAr: 'مرحبا {{team}}',
    bodyEn: '<p>en</p>',
    bodyAr: '<p>ar</p>',
  });

  const sent = await call(thisFile.api.url, 'POST', '/api/email/send/role', {
    token: editor,
    body: { templateId, roleKey: 'MANAGER', siteId: 'site-m', variables: { team: 'Ops' } },
  });
  expect(sent.status).toBe(202);
  expect(sent.body).toEqual({
    batchId: expect.any(String),
    recipients: 2,
    workflowId: `email-role:${sent.body.batchId}`,
    runId: expect.any(String),
    uiUrl: expect.any(String),
  });
  const result = await thisFile.platform.temporal.client.workflow.getHandle(sent.body.workflowId).result();
  expect(result).toEqual(expect.objectContaining({ delivered: 2, failed: 0, done: true }));
  await recordHistory(thisFile.platform.temporal, { workflowId: sent.body.workflowId, name: 'email-role-delivered' });
  const progress = await call(thisFile.api.url, 'GET', `/api/email/batches/${sent.body.batchId}`, { token: editor });
  expect(progress.body).toEqual({
    batchId: sent.body.batchId,
    siteId: 'site-m',
    recipients: 2,
    pending: 0,
    success: 2,
    failed: 0,
    done: true,
    workflowId: sent.body.workflowId,
    runId: sent.body.runId,
    uiUrl: sent.body.uiUrl,
  });
  const outsider = await thisFile.platform.token({ sub: 'oz', roles: ['EDITOR'], sites: ['site-z'] });
  expectProblem(await call(thisFile.api.url, 'GET', `/api/email/batches/${sent.body.batchId}`, { token: outsider }), 403, 'FORBIDDEN');
  expectProblem(await call(thisFile.api.url, 'GET', '/api/email/batches/00000000-0000-4000-8000-000000000000', { token: editor }), 404, 'NOT_FOUND');

  const logs = (await call(thisFile.api.url, 'GET', `/api/email/send/${templateId}/logs`, { token: editor })).body.items;
  expect(logs.map((log: any) => [log.recipient, log.locale, log.status]).sort()).toEqual([
    [address('m1'), 'en', 'SUCCESS'],
    [address('m2'), 'ar', 'SUCCESS'],
  ]);
  expect((await mailTo(mailApi, address('m1'))).map((mail) => mail.subject)).toEqual(['Hi Ops']);
  expect((await mailTo(mailApi, address('m2'))).map((mail) => mail.subject)).toEqual(['مرحبا Ops']);
  expect(await mailTo(mailApi, address('m3'))).toEqual([]);
  expect(await mailTo(mailApi, address('e1'))).toEqual([]);
});

test('with the SMTP server stopped the log stays PENDING while retrying, then FAILED with the reason; a retry after it is back succeeds', async () => {
  const dir = path.join(os.tmpdir(), `opsflow-stopped-smtp-${process.pid}`);
  const doomed = await startMailCapture({ smtpPort: await freePort(), uiPort: await freePort(), logFile: path.join(dir, 'mailpit.log') });
  const created = await call(thisFile.api.url, 'POST', '/api/settings/email', {
    token: admin,
    body: { configName: 'doomed', transport: 'SMTP', smtpHost: '127.0.0.1', smtpPort: doomed.smtpPort, isActive: true },
  });
  await doomed.stop();
  try {
    const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-m');
    const sent = await call(thisFile.api.url, 'POST', '/api/email/send', {
      token: editor,
      body: { templateId, to: address('late'), siteId: 'site-m', variables: { user: { name: 'L' }, orders: [{ id: 1 }] } },
    });
    const retrying = await waitUntil('a failed attempt', async () => {
      const log = (await call(thisFile.api.url, 'GET', `/api/email/send/${templateId}/logs`, { token: editor })).body.items[0];
      return log.attempts >= 1 && log.error ? log : null;
    });
    expect(retrying.status).toBe('PENDING');
    expect(retrying.error).toMatch(/ECONNREFUSED|connect/i);
    const failed = await finalLog(thisFile.api.url, editor, templateId, sent.body.logId);
    expect(failed).toEqual(expect.objectContaining({ status: 'FAILED', attempts: 4, error: expect.stringMatching(/ECONNREFUSED|connect/i) }));

    expect((await call(thisFile.api.url, 'POST', `/api/settings/email/${captureConfigId}/activate`, { token: admin })).body.isActive).toBe(true);
    expect((await call(thisFile.api.url, 'GET', `/api/settings/email/${created.body.id}`, { token: admin })).body.isActive).toBe(false);
    const retried = await call(thisFile.api.url, 'POST', `/api/email/logs/${sent.body.logId}/retry`, { token: admin });
    expect(retried.status).toBe(202);
    expect(await finalLog(thisFile.api.url, editor, templateId, sent.body.logId)).toEqual(expect.objectContaining({ status: 'SUCCESS' }));
    expectProblem(await call(thisFile.api.url, 'POST', `/api/email/logs/${sent.body.logId}/retry`, { token: admin }), 409, 'LOG_NOT_FAILED');
  } finally {
    await call(thisFile.api.url, 'POST', `/api/settings/email/${captureConfigId}/activate`, { token: admin });
  }
});

test('a worker killed in the middle of a bulk send and restarted leaves every recipient with exactly one log row in a final state', async () => {
  const count = 1500;
  await thisFile.platform.db('directory.user').insert(
    Array.from({ length: count }, (_, i) => ({
      email: address(`bulk${i}`),
      name: `Bulk ${i}`,
      locale: i % 3 === 0 ? 'ar' : 'en',
      roles: ['VIEWER'],
      site_ids: ['site-k'],
    })),
  );
  const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-k');
  const sent = await call(thisFile.api.url, 'POST', '/api/email/send/role', { token: editor, body: { templateId, roleKey: 'VIEWER', siteId: 'site-k' } });
  expect(sent.body.recipients).toBe(count);
  const delivered = async () =>
    Number(
      ((await thisFile.platform.db('email.email_log').where({ batch_id: sent.body.batchId, status: 'SUCCESS' }).count({ n: '*' }).first()) as { n: string }).n,
    );
  await waitUntil('part of the batch delivered', async () => (await delivered()) >= 50, 60000);
  await worker.kill();
  const partial = await delivered();
  expect(partial).toBeLessThan(count);
  worker = await thisFile.platform.startWorker(['messaging', 'approvals']);

  const result = await thisFile.platform.temporal.client.workflow.getHandle(sent.body.workflowId).result();
  expect(result.done).toBe(true);
  const rows = await thisFile.platform.db('email.email_log').where({ batch_id: sent.body.batchId }).select('recipient', 'status');
  expect(rows).toHaveLength(count);
  expect(new Set(rows.map((row) => row.recipient)).size).toBe(count);
  expect(rows.filter((row) => row.status !== 'SUCCESS')).toEqual([]);
});

test('template preview: the Arabic rendering carries dir="rtl", a missing variable is listed, and nothing is sent or logged', async () => {
  const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-m');
  const logsBefore = await thisFile.platform.db('email.email_log').where({ template_id: templateId }).count({ n: '*' }).first();
  const captured = () => capturedCount(mailApi);
  const mailsBefore = await captured();
  const arabic = await call(thisFile.api.url, 'POST', `/api/email/templates/${templateId}/preview`, {
    token: editor,
    body: { locale: 'ar', variables: { user: { name: 'مازن' } } },
  });
  expect(arabic.status).toBe(200);
  expect(arabic.body).toEqual(expect.objectContaining({ locale: 'ar', dir: 'rtl', subject: 'أهلا مازن', missingVariables: [] }));
  expect(arabic.body.html).toContain('dir="rtl"');
  const english = await call(thisFile.api.url, 'POST', `/api/email/templates/${templateId}/preview`, {
    token: editor,
    body: { locale: 'en', variables: { user: { name: 'Eve' } } },
  });
  expect(english.body).toEqual(expect.objectContaining({ dir: 'ltr', subject: 'Welcome Eve', missingVariables: ['orders.0.id'] }));
  expectProblem(
    await call(thisFile.api.url, 'POST', `/api/email/templates/${templateId}/preview`, { token: editor, body: { locale: 'en', revision: 99 } }),
    404,
    'REVISION_NOT_FOUND',
  );
  expect(await thisFile.platform.db('email.email_log').where({ template_id: templateId }).count({ n: '*' }).first()).toEqual(logsBefore);
  expect(await captured()).toBe(mailsBefore);
});
