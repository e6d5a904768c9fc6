import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { platformWithApi } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { waitUntil } from '../support/wait';
import { startPostfix, RunningPostfix } from '../support/postfix';
import { finalLog, publishedTemplate } from './harness';
import { startRelay, TestRelay } from './relay';
import { startBounceIntake } from '../../api/modules/messaging/bounce-intake';
import { RunningBounceListener } from '../../adapters/messaging/bounce-listener';
import { verpAddress } from '../../adapters/messaging/verp';
import { secretKeysOf } from '../../lib/secrets';
import { sendSmtp } from '../../adapters/messaging/smtp';
import { ChannelConfigRow } from '../../data/messaging/channel-configs';
import { capturedLogger } from '../support/observed';

/**
 * Bounces and complaints from a real MTA (messaging, third wave): the platform sends through Debian's
 * Postfix on loopback, which relays to a peer that refuses one recipient with 550 and sends its delivery
 * status notification to the message's envelope sender, `bounces+{logId}.{tag}@bounce.example`, routed to
 * the platform's bounce listener.
 */
const DOMAIN = 'bounce.example';
const thisFile = platformWithApi({ env: { BOUNCE_DOMAIN: DOMAIN } });
const GONE = 'gone@far.example';
const GONE_TOO = 'gone-too@far.example';
const KEPT = 'kept@far.example';
let admin: string;
let editor: string;
let far: TestRelay;
let intake: RunningBounceListener;
let postfix: RunningPostfix;
let templateId: string;
const intakeLog = capturedLogger();

const send = async (to: string) =>
  (
    await call(thisFile.api.url, 'POST', '/api/email/send', {
      token: editor,
      body: { templateId, to, siteId: 'site-b', variables: { user: { name: 'B' }, orders: [{ id: 1 }] } },
    })
  ).body.logId as string;
const logRow = (logId: string) =>
  thisFile.platform
    .db('email.email_log')
    .where({ id: Number(logId) })
    .first();
/** The log row once the DSN for it is recorded (permanent-failure). */
const dsnRecorded = (logId: string) =>
  waitUntil(
    `the DSN for log ${logId} recorded`,
    async () => {
      const row = await logRow(logId);
      return row.delivery_status === 'permanent-failure' ? row : null;
    },
    { timeoutMs: 60000 },
  );
const suppressions = async (query = '') =>
  (await call(thisFile.api.url, 'GET', `/api/email/suppressions?siteId=site-b${query}`, { token: admin })).body.items as Array<Record<string, unknown>>;

/** Hands a raw message to the bounce listener, as a mail system would. */
async function report(to: string, raw: string): Promise<void> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: intake.port, ignoreTLS: true });
  try {
    await transport.sendMail({ envelope: { from: 'mailer-daemon@mailbox.example', to: [to] }, raw });
  } finally {
    transport.close();
  }
}

const complaintAbout = (returnPath: string) =>
  [
    'From: feedback@mailbox.example',
    `To: complaints@${DOMAIN}`,
    'Subject: FW: Welcome',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="ARF"',
    '',
    '--ARF',
    'Content-Type: text/plain',
    '',
    'This is an email abuse report.',
    '--ARF',
    'Content-Type: message/feedback-report',
    '',
    'Feedback-Type: abuse',
    'User-Agent: MailboxFBL/1.0',
    'Version: 1',
    '--ARF',
    'Content-Type: message/rfc822',
    '',
    `Return-Path: <${returnPath}>`,
    `To: ${KEPT}`,
    'Subject: Welcome B',
    '',
    'Hello',
    '--ARF--',
    '',
  ].join('\r\n');

beforeAll(async () => {
  await thisFile.platform.startWorker(['messaging', 'approvals']);
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  editor = await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-b'] });
  far = await startRelay({ refuses: (to) => to === GONE || to === GONE_TOO });
  const listening = await startBounceIntake({
    db: thisFile.platform.db,
    config: { ...thisFile.platform.config, mail: { ...thisFile.platform.config.mail, bounceSmtp: { host: '127.0.0.1', port: 0 } } },
    logger: intakeLog.logger,
  });
  if (!listening) throw new Error('the bounce intake did not start');
  intake = listening;
  postfix = await startPostfix({
    dir: fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-postfix-')),
    routes: { 'far.example': { host: '127.0.0.1', port: far.port }, [DOMAIN]: { host: '127.0.0.1', port: intake.port } },
  });
  const created = await call(thisFile.api.url, 'POST', '/api/settings/email', {
    token: admin,
    body: { configName: 'postfix', transport: 'SMTP', smtpHost: '127.0.0.1', smtpPort: postfix.smtpPort, isActive: true },
  });
  expect(created.status).toBe(201);
  templateId = await publishedTemplate(thisFile.api.url, editor, 'site-b');
}, 120000);

afterAll(async () => {
  await postfix?.stop();
  await intake?.close();
  await far?.close();
});

test('a 550 from the far side comes back through Postfix as a DSN: the message ends permanent-failure, the address is suppressed, and the next send to it is not sent', async () => {
  const logId = await send(GONE);
  // Postfix took it: the platform's part ended well.
  expect(await finalLog(thisFile.api.url, editor, templateId, logId)).toEqual(expect.objectContaining({ status: 'SUCCESS', channel: 'postfix' }));
  const bounced = await dsnRecorded(logId);
  expect(bounced).toEqual(expect.objectContaining({ status: 'FAILED', error: expect.stringMatching(/^bounced: 5\.1\.1/) }));
  // The intake records the DSN when it accepts it; Postfix logs its delivery only after our 250, so the line can lag.
  const dsnDelivered = new RegExp(`to=<bounces\\+${logId}\\.[0-9a-f]{16}@${DOMAIN.replace('.', '\\.')}>.*status=sent`);
  await waitUntil('Postfix logging the DSN as delivered to the intake', () => dsnDelivered.test(postfix.maillog()), 30000);
  expect(await suppressions()).toEqual([expect.objectContaining({ address: GONE, reason: 'hard-bounce', logId, liftedAt: null })]);

  const next = await send(GONE);
  const skipped = await finalLog(thisFile.api.url, editor, templateId, next);
  expect(skipped).toEqual(expect.objectContaining({ status: 'FAILED', deliveryStatus: 'suppressed', attempts: 0, channel: null }));
  expect(postfix.maillog().match(/to=<gone@far\.example>/g)).toHaveLength(1);
}, 120000);

/** A client that connects from `from`, reads the greeting and then says nothing, as a slow attacker does: its greeting's code. */
function silentClient(from: string): Promise<{ code: string; socket: net.Socket }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port: intake.port, localAddress: from });
    socket.once('error', reject);
    socket.once('data', (greeting) => resolve({ code: greeting.toString().slice(0, 3), socket }));
    socket.once('close', () => resolve({ code: 'closed without a greeting', socket }));
  });
}

test('#58, finding 4: thirty silent clients from one address do not stall the intake: a DSN from Postfix gets through on its first try', async () => {
  // 127.0.0.2 is loopback too, and not the address Postfix sends from (127.0.0.1).
  const silent = await Promise.all(Array.from({ length: 30 }, () => silentClient('127.0.0.2')));
  try {
    // Ten places for that address; the others are told to come back later.
    expect(silent.filter((client) => client.code === '220')).toHaveLength(10);
    expect(silent.filter((client) => client.code === '421')).toHaveLength(20);
    const logId = await send(GONE_TOO);
    const bounced = await dsnRecorded(logId);
    expect(bounced.error).toMatch(/^bounced: 5\.1\.1/);
    // Postfix was let in on its first try: it never had to put the report off for later.
    const toIntake = new RegExp(`to=<bounces\\+${logId}\\.[0-9a-f]{16}@${DOMAIN.replace('.', '\\.')}>.*status=(\\w+)`, 'g');
    await waitUntil('Postfix logging the DSN as delivered to the intake', () => /status=sent/.test(postfix.maillog().match(toIntake)?.join('\n') ?? ''), 30000);
    expect([...postfix.maillog().matchAll(toIntake)].map((line) => line[1])).toEqual(['sent']);
  } finally {
    for (const client of silent) client.socket.destroy();
  }
}, 120000);

test('a forged report (a wrong tag) is refused at RCPT and changes nothing; a complaint quoting a message of ours suppresses its address', async () => {
  const logId = await send(KEPT);
  expect(await finalLog(thisFile.api.url, editor, templateId, logId)).toEqual(expect.objectContaining({ status: 'SUCCESS' }));
  await waitUntil('the message at the far side', () => far.received.includes(KEPT));

  const forged = `bounces+${logId}.0000000000000000@${DOMAIN}`;
  await expect(report(forged, complaintAbout(forged))).rejects.toThrow(/550/);
  // Accepted for the fixed address, but it names no message of ours with a right tag: dropped.
  await report(`complaints@${DOMAIN}`, complaintAbout(forged));
  expect((await logRow(logId)).delivery_status).toBe('delivered');
  expect((await suppressions()).map((entry) => entry.address)).not.toContain(KEPT);

  await report(`complaints@${DOMAIN}`, complaintAbout(verpAddress(logId, DOMAIN, secretKeysOf(thisFile.platform.config))));
  expect((await suppressions()).find((entry) => entry.address === KEPT)).toEqual(expect.objectContaining({ reason: 'complaint', logId }));
  // A complaint does not undo the delivery.
  expect((await logRow(logId)).delivery_status).toBe('delivered');
});

test("#58, finding 3: a VERP address's tag reaches no log: not the intake's line for a message it drops, nor a relay's refusal that quotes it", async () => {
  // An address no other test suppresses, so that the message goes out with its VERP sender.
  const logId = await send('logged@far.example');
  expect(await finalLog(thisFile.api.url, editor, templateId, logId)).toEqual(expect.objectContaining({ status: 'SUCCESS' }));
  const returnPath = verpAddress(logId, DOMAIN, secretKeysOf(thisFile.platform.config));
  const tag = returnPath.slice(returnPath.indexOf('.') + 1, returnPath.indexOf('@'));
  await report(returnPath, 'From: someone@mailbox.example\r\nSubject: not a report\r\n\r\nHello\r\n');
  const dropped = intakeLog.lines.find((line) => line.includes('a message that is not a report was dropped'));
  expect(dropped).toContain(`bounces+${logId}.[redacted]@${DOMAIN}`);
  expect(intakeLog.lines.join('\n')).not.toContain(tag);

  // A relay that refuses the sender quotes it; the failure is what the log row and the workers' logs keep.
  const refusing = await startRelay({ refusesSenders: true });
  try {
    const config = {
      id: 'refusing',
      updated_at: new Date(),
      smtp_host: '127.0.0.1',
      smtp_port: refusing.port,
      smtp_use_tls: false,
    } as unknown as ChannelConfigRow;
    const failure = await sendSmtp(config, null, { from: 'news@site.example', to: KEPT, subject: 'S', html: '<p>H</p>', returnPath }).catch(
      (error: Error) => error,
    );
    expect((failure as Error).message).toMatch(/553/);
    expect((failure as Error).message).toContain(`bounces+${logId}.[redacted]@${DOMAIN}`);
    expect((failure as Error).message).not.toContain(tag);
  } finally {
    await refusing.close();
  }
});

test('an ADMIN lifts an entry: it stays listed as lifted, by whom, and the address is sent to again', async () => {
  const entry = (await suppressions()).find((listed) => listed.address === KEPT) as { id: string };
  expectProblem(await call(thisFile.api.url, 'DELETE', `/api/email/suppressions/${entry.id}`, { token: editor }), 403, 'FORBIDDEN');
  const lifted = await call(thisFile.api.url, 'DELETE', `/api/email/suppressions/${entry.id}`, { token: admin });
  expect(lifted.status).toBe(200);
  expect(lifted.body).toEqual(expect.objectContaining({ address: KEPT, liftedBy: 'ada', liftedAt: expect.any(String) }));
  expectProblem(await call(thisFile.api.url, 'DELETE', `/api/email/suppressions/${entry.id}`, { token: admin }), 404, 'NOT_FOUND');
  expect((await suppressions()).map((listed) => listed.address)).not.toContain(KEPT);
  expect((await suppressions('&lifted=true')).map((listed) => listed.address)).toContain(KEPT);

  const before = far.received.filter((to) => to === KEPT).length;
  const logId = await send(KEPT);
  expect(await finalLog(thisFile.api.url, editor, templateId, logId)).toEqual(expect.objectContaining({ status: 'SUCCESS', deliveryStatus: 'delivered' }));
  await waitUntil('the message at the far side again', () => far.received.filter((to) => to === KEPT).length === before + 1);
});
