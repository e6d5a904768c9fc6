import http from 'node:http';
import { AddressInfo } from 'node:net';
import { platformWithApi } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { waitUntil } from '../support/wait';
import { publishedTemplate } from './harness';
import { startRelay, TestRelay } from './relay';

/** `Idempotency-Key` on the send endpoints (messaging, third wave): replay, another request (422), one in flight (409). */
const thisFile = platformWithApi();
let admin: string;
let editor: string;
let relay: TestRelay;

const address = (local: string) => `${local}@idempotent.example`;
const keyed = (key: string) => ({ 'idempotency-key': key });

beforeAll(async () => {
  await thisFile.platform.startWorker(['messaging', 'approvals']);
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  editor = await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-i'] });
  relay = await startRelay();
  const created = await call(thisFile.api.url, 'POST', '/api/settings/email', {
    token: admin,
    body: { configName: 'relay', transport: 'SMTP', smtpHost: '127.0.0.1', smtpPort: relay.port, isActive: true },
  });
  expect(created.status).toBe(201);
});

afterAll(async () => {
  await relay?.close();
});

test('the same key and body replays the first answer: one log row, one message; another body with that key is 422 and changes nothing', async () => {
  const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-i');
  const body = { templateId, to: address('once'), siteId: 'site-i', variables: { user: { name: 'O' }, orders: [{ id: 1 }] } };
  const first = await call(thisFile.api.url, 'POST', '/api/email/send', { token: editor, body, headers: keyed('send-1') });
  expect(first.status).toBe(202);
  // The same fields in another order are the same request.
  const reordered = { variables: body.variables, siteId: body.siteId, to: body.to, templateId };
  const again = await call(thisFile.api.url, 'POST', '/api/email/send', { token: editor, body: reordered, headers: keyed('send-1') });
  expect(again.status).toBe(202);
  expect(again.body).toEqual(first.body);
  expect(again.headers.get('idempotent-replayed')).toBe('true');

  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/email/send', { token: editor, body: { ...body, to: address('other') }, headers: keyed('send-1') }),
    422,
    'IDEMPOTENCY_KEY_REUSED',
  );
  await waitUntil('the message at the relay', () => relay.received.includes(address('once')));
  const rows = await thisFile.platform.db('email.email_log').where({ template_id: templateId }).select('recipient');
  expect(rows).toEqual([{ recipient: address('once') }]);
  expect(relay.received.filter((to) => to === address('once'))).toHaveLength(1);
  expect(relay.received).not.toContain(address('other'));

  // A key is one caller's: another caller's same key is another request.
  const colleague = await thisFile.platform.token({ sub: 'eve', roles: ['EDITOR'], sites: ['site-i'] });
  const theirs = await call(thisFile.api.url, 'POST', '/api/email/send', { token: colleague, body, headers: keyed('send-1') });
  expect(theirs.status).toBe(202);
  expect(theirs.body.logId).not.toBe(first.body.logId);
});

test('a retry while the first request is still being answered is 409; once it is answered, the key replays it', async () => {
  // A real SMS peer that holds its answer until the test lets it go.
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  const requests: string[] = [];
  const peer = http.createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => (text += chunk));
    request.on('end', () => {
      requests.push(text);
      void held.then(() => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
    });
  });
  await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
  try {
    const sms = await call(thisFile.api.url, 'POST', '/api/settings/sms', {
      token: admin,
      body: {
        configName: 'held-peer',
        transport: 'REST',
        serviceUrl: `http://127.0.0.1:${(peer.address() as AddressInfo).port}/sms`,
        restMethodType: 'POST',
        sampleRequest: '{"to":"{{phoneto}}","text":"{{messagecontent}}"}',
        isActive: true,
      },
    });
    expect(sms.status).toBe(201);
    const body = { channel: 'SMS', siteId: 'site-i', to: '+15550001111', content: 'once only' };
    const first = call(thisFile.api.url, 'POST', '/api/settings/communication/process', { token: admin, body, headers: keyed('sms-1') });
    await waitUntil('the peer holding the first request', () => requests.length === 1);
    expectProblem(
      await call(thisFile.api.url, 'POST', '/api/settings/communication/process', { token: admin, body, headers: keyed('sms-1') }),
      409,
      'IDEMPOTENCY_KEY_IN_USE',
    );
    release();
    expect((await first).body).toEqual({ status: 'SUCCESS', detail: 'sent' });
    const replayed = await call(thisFile.api.url, 'POST', '/api/settings/communication/process', { token: admin, body, headers: keyed('sms-1') });
    expect(replayed.status).toBe(200);
    expect(replayed.body).toEqual({ status: 'SUCCESS', detail: 'sent' });
    expect(requests).toHaveLength(1);
  } finally {
    release();
    await new Promise<void>((resolve) => peer.close(() => resolve()));
  }
});

test('a refused request frees its key, and a malformed key is 400', async () => {
  const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-i');
  const body = { templateId, to: address('later'), siteId: 'site-x' };
  expectProblem(await call(thisFile.api.url, 'POST', '/api/email/send', { token: editor, body, headers: keyed('send-2') }), 403, 'FORBIDDEN');
  const accepted = await call(thisFile.api.url, 'POST', '/api/email/send', { token: editor, body: { ...body, siteId: 'site-i' }, headers: keyed('send-2') });
  expect(accepted.status).toBe(202);
  expectProblem(
    await call(thisFile.api.url, 'POST', '/api/email/send', { token: editor, body: { ...body, siteId: 'site-i' }, headers: keyed('a key with spaces') }),
    400,
    'VALIDATION_FAILED',
  );
});
