import { createHmac } from 'node:crypto';
import { platformWithApi } from '../support/platform';
import { capturedLogger } from '../support/observed';
import { keyDerivedFrom } from '../../lib/secrets';
import { linkKeysOf } from '../../lib/link-keys';
import { unsubscribeToken } from '../../adapters/messaging/unsubscribe-token';
import { retirePreviousLinkKeys } from '../../data/messaging/retired-link-keys';
import { call, expectProblem } from '../support/http';
import { waitUntil } from '../support/wait';
import { CapturedMail, finalLog, mailTo, publishedTemplate, sentHeader, smtpChannel } from './harness';

/** One-click unsubscribe (RFC 8058, messaging third wave), read from the headers of mail the capture received. */
const apiLog = capturedLogger();
const thisFile = platformWithApi({ apiDeps: () => ({ logger: apiLog.logger }) });
let admin: string;
let editor: string;
let mailApi: string;

const address = (local: string) => `${local}@unsubscribe-test.example`;
const LEAVER = address('leaver');
const STAYER = address('stayer');

beforeAll(async () => {
  await thisFile.platform.startWorker(['messaging', 'approvals']);
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  editor = await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-u'] });
  mailApi = thisFile.platform.info.mail.apiUrl;
  await smtpChannel(thisFile.api.url, admin, 'capture', thisFile.platform.info.mail.smtpPort);
  await thisFile.platform
    .db('directory.user')
    .insert([LEAVER, STAYER].map((email) => ({ email, name: email, locale: 'en', roles: ['VIEWER'], site_ids: ['site-u'] })));
});

/** A token as the platform issued them before #58: the grant in the clear (base64url JSON), with an HMAC. */
const signedToken = (siteId: string, recipient: string, secretsKey = thisFile.platform.config.secrets.key) => {
  const payload = Buffer.from(JSON.stringify([siteId, recipient, 'bulk'])).toString('base64url');
  const key = keyDerivedFrom(secretsKey, 'opsflow', 'unsubscribe-link');
  return `${payload}.${createHmac('sha256', key).update(payload).digest().subarray(0, 16).toString('base64url')}`;
};

const roleSend = async (templateId: string) => {
  const sent = await call(thisFile.api.url, 'POST', '/api/email/send/role', { token: editor, body: { templateId, roleKey: 'VIEWER', siteId: 'site-u' } });
  expect(sent.status).toBe(202);
  await thisFile.platform.temporal.client.workflow.getHandle(sent.body.workflowId).result();
  return sent.body.batchId as string;
};
const header = (mail: CapturedMail, name: string) => sentHeader(mailApi, mail, name);

test('a role send carries List-Unsubscribe and List-Unsubscribe-Post; a POST alone to the link unsubscribes that address, and the next role send skips it', async () => {
  const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-u');
  await roleSend(templateId);
  const [mail] = await waitUntil('the role send at the capture', async () => {
    const got = await mailTo(mailApi, LEAVER);
    return got.length > 0 ? got : null;
  });
  expect(await header(mail, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
  const link = /^<(.+)>$/.exec((await header(mail, 'List-Unsubscribe')) ?? '')?.[1] as string;
  expect(link).toMatch(/\/u\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  const path = new URL(link).pathname;

  // What a mail client sends: a form POST, no token of anyone's.
  const unsubscribed = await fetch(`${thisFile.api.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'List-Unsubscribe=One-Click',
  });
  expect(unsubscribed.status).toBe(200);
  expect(await unsubscribed.json()).toEqual({ unsubscribed: true, category: 'bulk' });
  // A link opened in a browser only shows a button that POSTs.
  const page = await fetch(`${thisFile.api.url}${path}`);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('<form method="post">');

  const batchId = await roleSend(templateId);
  const rows = await thisFile.platform.db('email.email_log').where({ batch_id: batchId }).select('recipient', 'status', 'delivery_status', 'attempts');
  expect(rows.find((row) => row.recipient === LEAVER)).toEqual(expect.objectContaining({ status: 'FAILED', delivery_status: 'suppressed', attempts: 0 }));
  expect(rows.find((row) => row.recipient === STAYER)).toEqual(expect.objectContaining({ status: 'SUCCESS', delivery_status: 'delivered' }));
  expect(await mailTo(mailApi, LEAVER)).toHaveLength(1);
});

test('a forged token, or one changed to name another address, is refused and unsubscribes no one', async () => {
  const [mail] = await mailTo(mailApi, STAYER);
  const token = new URL(/^<(.+)>$/.exec((await header(mail, 'List-Unsubscribe')) ?? '')?.[1] as string).pathname.slice('/u/'.length);
  const [form, sealed] = token.split('.');
  const flipped = Buffer.from(sealed, 'base64url');
  flipped[flipped.length - 1] ^= 1;
  const [payload] = signedToken('site-u', STAYER).split('.');
  const otherPayload = Buffer.from(JSON.stringify(['site-u', address('someone-else'), 'bulk'])).toString('base64url');
  const signature = signedToken('site-u', STAYER).split('.')[1];
  const forgeries = [
    `${form}.${flipped.toString('base64url')}`,
    `${form}.${sealed}x`,
    `${otherPayload}.${signature}`,
    `${payload}.${'A'.repeat(signature.length)}`,
  ];
  for (const forged of forgeries) expectProblem(await call(thisFile.api.url, 'POST', `/u/${forged}`), 400, 'UNSUBSCRIBE_LINK_INVALID');
  expect(await thisFile.platform.db('email.unsubscription').where({ site_id: 'site-u' }).select('address')).toEqual([{ address: LEAVER }]);
});

test("#58, finding 3: the link's token is sealed, so it does not carry the address; a link issued before still works; the API's access log keeps neither", async () => {
  const [mail] = await mailTo(mailApi, STAYER);
  const token = new URL(/^<(.+)>$/.exec((await header(mail, 'List-Unsubscribe')) ?? '')?.[1] as string).pathname.slice('/u/'.length);
  const opened = token
    .split('.')
    .map((part) => Buffer.from(part, 'base64url').toString('latin1'))
    .join(' ');
  for (const clue of [STAYER, 'site-u', 'bulk']) expect(opened).not.toContain(clue);
  // Nothing moved: the same address from a link in an old email, signed and in the clear, is still honoured.
  const old = address('old-link');
  const answered = await fetch(`${thisFile.api.url}/u/${signedToken('site-u', old)}`, { method: 'POST', body: 'List-Unsubscribe=One-Click' });
  expect(answered.status).toBe(200);
  expect(await thisFile.platform.db('email.unsubscription').where({ site_id: 'site-u', address: old }).first()).toBeDefined();
  const lines = apiLog.lines.join('\n');
  expect(lines).toContain('"path":"/u/[redacted]"');
  for (const secret of [token, signedToken('site-u', old), token.split('.')[1], signedToken('site-u', old).split('.')[0]]) expect(lines).not.toContain(secret);
});

test("#58, finding 3: a link outlives a rotation of SECRETS_KEY: once secrets:rotate kept the old key's link keys, links sealed or signed under it work without it", async () => {
  const oldKey = 'a-secrets-key-rotated-away-long-ago-0001';
  const sealed = unsubscribeToken({ siteId: 'site-u', address: address('rotated-sealed'), category: 'bulk' }, linkKeysOf(oldKey));
  const signed = signedToken('site-u', address('rotated-signed'), oldKey);
  const unsubscribe = (token: string) => fetch(`${thisFile.api.url}/u/${token}`, { method: 'POST', body: 'List-Unsubscribe=One-Click' });
  // The API runs on today's key alone: before the rotation kept the old key's link keys, its links are refused.
  expectProblem(await call(thisFile.api.url, 'POST', `/u/${sealed}`), 400, 'UNSUBSCRIBE_LINK_INVALID');
  const config = thisFile.platform.config;
  await retirePreviousLinkKeys(thisFile.platform.db, { current: config.secrets.key, previous: oldKey });
  // Repeating the rotation keeps them once.
  await retirePreviousLinkKeys(thisFile.platform.db, { current: config.secrets.key, previous: oldKey });
  expect(await thisFile.platform.db('email.retired_link_key').select('fingerprint')).toHaveLength(1);
  for (const token of [sealed, signed]) expect((await unsubscribe(token)).status).toBe(200);
  const left = await thisFile.platform
    .db('email.unsubscription')
    .whereIn('address', [address('rotated-sealed'), address('rotated-signed')])
    .pluck('address');
  expect(left.sort()).toEqual([address('rotated-sealed'), address('rotated-signed')]);
});

test('a transactional send carries no unsubscribe header and still reaches an address that unsubscribed; a bulk template does carry it', async () => {
  const transactional = await publishedTemplate(thisFile.api.url, editor, 'site-u');
  const sent = await call(thisFile.api.url, 'POST', '/api/email/send', {
    token: editor,
    body: { templateId: transactional, to: LEAVER, siteId: 'site-u', variables: { user: { name: 'L' }, orders: [{ id: 1 }] } },
  });
  expect(await finalLog(thisFile.api.url, editor, transactional, sent.body.logId)).toEqual(expect.objectContaining({ status: 'SUCCESS' }));
  const mails = await mailTo(mailApi, LEAVER);
  expect(mails).toHaveLength(2);
  expect(
    await header(
      mails.find((mail) => mail.subject === 'Welcome L')!,
      'List-Unsubscribe',
    ),
  ).toBeUndefined();

  const bulk = await publishedTemplate(thisFile.api.url, editor, 'site-u', { category: 'bulk', subjectEn: 'News for {{user.name}}' });
  const news = await call(thisFile.api.url, 'POST', '/api/email/send', {
    token: editor,
    body: { templateId: bulk, to: STAYER, siteId: 'site-u', variables: { user: { name: 'S' } } },
  });
  expect(await finalLog(thisFile.api.url, editor, bulk, news.body.logId)).toEqual(expect.objectContaining({ status: 'SUCCESS' }));
  const newsMail = (await mailTo(mailApi, STAYER)).find((mail) => mail.subject === 'News for S')!;
  expect(await header(newsMail, 'List-Unsubscribe')).toMatch(/^<.+\/u\/.+>$/);
  // A bulk template's single send to the address that left bulk mail is not sent.
  const skipped = await call(thisFile.api.url, 'POST', '/api/email/send', {
    token: editor,
    body: { templateId: bulk, to: LEAVER, siteId: 'site-u', variables: { user: { name: 'L2' } } },
  });
  expect(await finalLog(thisFile.api.url, editor, bulk, skipped.body.logId)).toEqual(
    expect.objectContaining({ status: 'FAILED', deliveryStatus: 'suppressed' }),
  );
});
