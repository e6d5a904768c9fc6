import http from 'node:http';
import { AddressInfo } from 'node:net';
import { createHmac } from 'node:crypto';
import { platformWithApi, RunningWorker } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { waitUntil } from '../support/wait';
import { finalLog, publishedTemplate, smtpChannel } from './harness';
import { startRelay, TestRelay } from './relay';
import { recordHistory } from '../support/histories';
import {
  deleteStatusCallback,
  findStatusCallback,
  openCallbackSecret,
  reencryptCallbackSecrets,
  saveStatusCallback,
  secondsToNextStatusEvent,
} from '../../data/messaging/status-callbacks';
import { STATUS_CALLBACKS_WORKFLOW_ID } from '../../workflows/messaging/definitions';

/**
 * Signed status callbacks (messaging.md, third wave): a real HTTP receiver on loopback hears of every change
 * of a message's delivery status, signed with the site's secret; a refusal (500) is retried with the same
 * event id, and a worker killed with a callback in flight loses nothing.
 */
const thisFile = platformWithApi();
let worker: RunningWorker;
let admin: string;
let editor: string;
let relay: TestRelay;
const SECRET = 'callback-secret-0123456789abcdef-site-c';

interface Heard {
  eventId: string;
  timestamp: string;
  signature: string;
  body: string;
  answered: number;
}

/** A receiver whose answer the test decides per request (`hold`: never answered). */
async function startReceiver(decide: (event: { id: string; status: string }, triesOfIt: number) => number | 'hold') {
  const heard: Heard[] = [];
  const held: http.ServerResponse[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const event = JSON.parse(body) as { id: string; status: string };
      const tries = heard.filter((entry) => entry.eventId === event.id).length;
      const answer = decide(event, tries);
      heard.push({
        eventId: String(request.headers['x-opsflow-event-id']),
        timestamp: String(request.headers['x-opsflow-timestamp']),
        signature: String(request.headers['x-opsflow-signature']),
        body,
        answered: answer === 'hold' ? 0 : answer,
      });
      if (answer === 'hold') held.push(response);
      else response.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/opsflow-status`,
    heard,
    close: () => {
      held.forEach((response) => response.destroy());
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const validSignature = (entry: Heard) => entry.signature === `sha256=${createHmac('sha256', SECRET).update(`${entry.timestamp}.${entry.body}`).digest('hex')}`;

beforeAll(async () => {
  worker = await thisFile.platform.startWorker(['messaging', 'approvals']);
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  editor = await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-c'] });
  relay = await startRelay();
  await smtpChannel(thisFile.api.url, admin, 'callbacks-relay', relay.port);
});

afterAll(async () => {
  await relay?.close();
});

test('with no event open, the dispatcher is told none waits: it then sleeps until word of one, not 50 ms', async () => {
  // PostgreSQL's greatest() skips a null: min(next_at) of no rows once read as "due now", and an idle
  // dispatcher looked again twenty times a second.
  const open = await thisFile.platform.db('email.status_event').whereNull('delivered_at').whereNull('given_up_at').count({ n: '*' }).first();
  expect(Number((open as { n: string }).n)).toBe(0);
  expect(await secondsToNextStatusEvent(thisFile.platform.db)).toBeNull();
});

test("a site's callback is set by an ADMIN with a secret that is never shown again; bad input changes nothing", async () => {
  const path = '/api/settings/callbacks/site-c';
  expectProblem(await call(thisFile.api.url, 'GET', path, { token: admin }), 404, 'NOT_FOUND');
  expectProblem(await call(thisFile.api.url, 'PUT', path, { token: admin, body: { url: 'http://127.0.0.1:9/x' } }), 400, 'VALIDATION_FAILED');
  expectProblem(await call(thisFile.api.url, 'PUT', path, { token: admin, body: { url: 'ftp://example.test/x', secret: SECRET } }), 400, 'VALIDATION_FAILED');
  expectProblem(await call(thisFile.api.url, 'PUT', path, { token: admin, body: { url: 'http://127.0.0.1:9/x', secret: 'short' } }), 400, 'VALIDATION_FAILED');
  expectProblem(
    await call(thisFile.api.url, 'PUT', path, { token: admin, body: { url: 'http://user:pass@127.0.0.1:9/x', secret: SECRET } }),
    400,
    'VALIDATION_FAILED',
  );
  expectProblem(await call(thisFile.api.url, 'PUT', path, { token: editor, body: { url: 'http://127.0.0.1:9/x', secret: SECRET } }), 403, 'FORBIDDEN');
  expectProblem(await call(thisFile.api.url, 'GET', path, { token: admin }), 404, 'NOT_FOUND');

  const saved = await call(thisFile.api.url, 'PUT', path, { token: admin, body: { url: 'http://127.0.0.1:9/x', secret: SECRET } });
  expect(saved.status).toBe(200);
  expect(saved.body).toEqual(expect.objectContaining({ siteId: 'site-c', url: 'http://127.0.0.1:9/x', hasSecret: true }));
  expect(JSON.stringify(saved.body)).not.toContain(SECRET);
  // Stored sealed, not as given.
  const stored = await thisFile.platform.db('settings.status_callback').where({ site_id: 'site-c' }).first();
  expect(stored.secret).not.toContain(SECRET);
  // A URL changed without a secret keeps the stored one.
  const moved = await call(thisFile.api.url, 'PUT', path, { token: admin, body: { url: 'http://127.0.0.1:9/y' } });
  expect(moved.body).toEqual(expect.objectContaining({ url: 'http://127.0.0.1:9/y', hasSecret: true }));
  expect(await thisFile.platform.db('settings.status_callback').where({ site_id: 'site-c' }).first()).toEqual(
    expect.objectContaining({ secret: stored.secret }),
  );
  expect((await call(thisFile.api.url, 'DELETE', path, { token: admin })).status).toBe(204);
});

test('a rotation of SECRETS_KEY re-seals a callback secret: the new key alone then opens it', async () => {
  const oldKeys = { current: thisFile.platform.config.secrets.key, previous: null };
  const newKeys = { current: 'a-new-secrets-key-for-the-callback-rotation-0001', previous: oldKeys.current };
  await saveStatusCallback(thisFile.platform.db, oldKeys, { siteId: 'site-rotated', url: 'http://127.0.0.1:9/r', secret: SECRET, by: 'test' });
  expect(await reencryptCallbackSecrets(thisFile.platform.db, newKeys)).toEqual({ rewritten: 1, unreadable: [] });
  const row = (await findStatusCallback(thisFile.platform.db, 'site-rotated'))!;
  expect(openCallbackSecret(row, { current: newKeys.current, previous: null })).toBe(SECRET);
  expect(() => openCallbackSecret(row, oldKeys)).toThrow();
  await deleteStatusCallback(thisFile.platform.db, 'site-rotated');
});

test('"send a test event" POSTs a signed event now and says what the receiver answered', async () => {
  let answer = 200;
  const receiver = await startReceiver(() => answer);
  try {
    await call(thisFile.api.url, 'PUT', '/api/settings/callbacks/site-c', { token: admin, body: { url: receiver.url, secret: SECRET } });
    const tested = await call(thisFile.api.url, 'POST', '/api/settings/callbacks/site-c/test', { token: admin });
    expect(tested.body).toEqual({ delivered: true, status: 200, detail: 'the receiver answered 200' });
    expect(receiver.heard).toHaveLength(1);
    expect(validSignature(receiver.heard[0])).toBe(true);
    expect(JSON.parse(receiver.heard[0].body)).toEqual(expect.objectContaining({ type: 'test', siteId: 'site-c', id: receiver.heard[0].eventId }));
    answer = 500;
    expect((await call(thisFile.api.url, 'POST', '/api/settings/callbacks/site-c/test', { token: admin })).body).toEqual(
      expect.objectContaining({ delivered: false, status: 500 }),
    );
  } finally {
    await receiver.close();
  }
});

test('a send: one signed callback per status change (sending, delivered), each refused once with 500 and then retried with the same event id', async () => {
  const receiver = await startReceiver((_event, tries) => (tries === 0 ? 500 : 200));
  try {
    await call(thisFile.api.url, 'PUT', '/api/settings/callbacks/site-c', { token: admin, body: { url: receiver.url, secret: SECRET } });
    const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-c');
    const sent = await call(thisFile.api.url, 'POST', '/api/email/send', {
      token: editor,
      body: { templateId, to: 'reader@callbacks.example', siteId: 'site-c', variables: { user: { name: 'R' }, orders: [{ id: 1 }] } },
    });
    expect(sent.status).toBe(202);
    expect((await finalLog(thisFile.api.url, editor, templateId, sent.body.logId)).deliveryStatus).toBe('delivered');

    const delivered = await waitUntil(
      'both status events answered 200',
      () => {
        const ok = receiver.heard.filter((entry) => entry.answered === 200);
        return ok.length >= 2 ? ok : null;
      },
      { timeoutMs: 60000 },
    );
    // A moment more: nothing further may arrive.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const events = receiver.heard.map((entry) => ({ ...entry, event: JSON.parse(entry.body) }));
    expect(events.every(validSignature)).toBe(true);
    expect(events.every((entry) => entry.event.id === entry.eventId)).toBe(true);
    expect(new Set(events.map((entry) => entry.eventId)).size).toBe(2);
    expect(delivered.map((entry) => JSON.parse(entry.body).status).sort()).toEqual(['delivered', 'sending']);
    expect(receiver.heard.filter((entry) => entry.answered === 200)).toHaveLength(2);
    for (const { eventId } of delivered) {
      expect(receiver.heard.filter((entry) => entry.eventId === eventId).map((entry) => entry.answered)).toEqual([500, 200]);
    }
    await recordHistory(thisFile.platform.temporal, { workflowId: STATUS_CALLBACKS_WORKFLOW_ID, name: 'status-callbacks-delivering' });
    const event = JSON.parse(delivered.find((entry) => JSON.parse(entry.body).status === 'delivered')!.body);
    expect(event).toEqual(
      expect.objectContaining({
        type: 'email.status',
        siteId: 'site-c',
        messageId: sent.body.logId,
        to: 'reader@callbacks.example',
        previousStatus: 'sending',
      }),
    );
  } finally {
    await receiver.close();
  }
}, 120000);

test('a worker killed with a callback in flight: the event is delivered after it, with the same event id', async () => {
  let holding = true;
  const receiver = await startReceiver(() => (holding ? 'hold' : 200));
  try {
    await call(thisFile.api.url, 'PUT', '/api/settings/callbacks/site-c', { token: admin, body: { url: receiver.url, secret: SECRET } });
    const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-c');
    const sent = await call(thisFile.api.url, 'POST', '/api/email/send', {
      token: editor,
      body: { templateId, to: 'killed@callbacks.example', siteId: 'site-c', variables: { user: { name: 'K' }, orders: [{ id: 1 }] } },
    });
    await waitUntil('a callback in flight', () => receiver.heard.length > 0, { timeoutMs: 60000 });
    const inFlight = receiver.heard[0].eventId;
    await worker.kill();
    holding = false;
    worker = await thisFile.platform.startWorker(['messaging', 'approvals']);
    await waitUntil('the held event delivered after the kill', () => receiver.heard.some((entry) => entry.eventId === inFlight && entry.answered === 200), {
      timeoutMs: 120000,
    });
    const rows = await thisFile.platform.db('email.status_event').where({ log_id: Number(sent.body.logId) });
    await waitUntil('every event of the message delivered', async () =>
      (
        await thisFile.platform
          .db('email.status_event')
          .where({ log_id: Number(sent.body.logId) })
          .whereNull('delivered_at')
      ).length === 0
        ? true
        : null,
    );
    expect(rows.map((row: { event_id: string }) => row.event_id)).toContain(inFlight);
  } finally {
    await receiver.close();
  }
}, 240000);
