import { attachPlatform, RunningApi, TestPlatform } from '../support/platform';
import { call } from '../support/http';
import { recordHistory } from '../support/histories';
import { waitUntil } from '../support/wait';
import { publishedTemplate, smtpChannel } from '../messaging/harness';
import { startRelay, TestRelay } from '../messaging/relay';

/**
 * The mail relay gone in the middle of a role send, and back a minute later: a real SMTP server (the
 * `smtp-server` package) that this test closes, every connection cut, and opens again on the same port.
 * Every message must be sent once, after the pause, and the log rows must show the failed attempts.
 */
const COUNT = 1000;
const OUTAGE_MS = 60000;

let platform: TestPlatform;
let api: RunningApi;
let relay: TestRelay;

beforeAll(async () => {
  platform = await attachPlatform();
  api = await platform.startApi();
  await platform.startWorker(['messaging', 'approvals']);
  relay = await startRelay();
});

afterAll(async () => {
  await relay?.close();
  await platform?.close();
});

test(`the relay gone halfway through a ${COUNT}-recipient role send and back ${OUTAGE_MS / 1000} s later: every message is sent exactly once, after the pause, and the rows show the failed attempts`, async () => {
  const admin = await platform.token({ sub: 'ada', roles: ['ADMIN'] });
  const editor = await platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-o'] });
  const address = (i: number) => `outage${i}@relay-outage.example`;
  await platform
    .db('directory.user')
    .insert(Array.from({ length: COUNT }, (_, i) => ({ email: address(i), name: `O ${i}`, locale: 'en', roles: ['VIEWER'], site_ids: ['site-o'] })));
  await smtpChannel(api.url, admin, 'relay', relay.port);
  const templateId = await publishedTemplate(api.url, editor, 'site-o');
  const sent = await call(api.url, 'POST', '/api/email/send/role', { token: editor, body: { templateId, roleKey: 'VIEWER', siteId: 'site-o' } });
  expect(sent.body.recipients).toBe(COUNT);

  await waitUntil('a part of the batch received', () => relay.received.length >= COUNT / 4, { timeoutMs: 60000, intervalMs: 20 });
  await relay.close();
  const closedAt = Date.now();
  const receivedBefore = relay.received.length;
  await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
  const handle = platform.temporal.client.workflow.getHandle(sent.body.workflowId);
  // Waiting, not failing: still the first pass over the batch, however long the relay is away.
  expect(await handle.query('progress')).toEqual(expect.objectContaining({ done: false, pass: 1 }));
  expect(relay.received.length).toBe(receivedBefore);
  await relay.reopen();
  const reopenedAt = Date.now();

  const result = await handle.result();
  expect(result).toEqual(expect.objectContaining({ done: true, failed: 0 }));
  const rows = await platform.db('email.email_log').where({ batch_id: sent.body.batchId }).select('recipient', 'status', 'attempts');
  expect(rows.filter((row) => row.status !== 'SUCCESS')).toEqual([]);
  const outOf = relay.received.filter((to) => to.endsWith('@relay-outage.example'));
  expect(outOf.length).toBe(COUNT);
  expect(new Set(outOf).size).toBe(COUNT);
  // The rows the outage met count their failed attempts (their last reason is cleared once they go).
  const retried = rows.filter((row) => row.attempts > 1);
  expect(retried.length).toBeGreaterThan(0);
  await recordHistory(platform.temporal, { workflowId: sent.body.workflowId, name: 'email-role-relay-outage' });
  console.log(
    `mail relay gone mid-send for ${Math.round((reopenedAt - closedAt) / 1000)} s: ${receivedBefore} received before, ${outOf.length} in all, ${outOf.length - new Set(outOf).size} twice; ${retried.length} rows retried; the rest went within ${Math.round((Date.now() - reopenedAt) / 1000)} s of its return`,
  );
}, 600000);
