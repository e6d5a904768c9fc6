import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { platformWithApi } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { finalLog, publishedTemplate, startPeer } from './harness';

/**
 * Stored passwords are bound to their row and column and need the full tag; a key rotation keeps every
 * send working. Attacks by someone who can write the database but does not hold SECRETS_KEY.
 */
const thisFile = platformWithApi();
let admin: string;
let editor: string;

beforeAll(async () => {
  await thisFile.platform.startWorker(['messaging', 'approvals']);
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  editor = await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-s'] });
});

const restConfig = (name: string, url: string, password: string) => ({
  configName: name,
  transport: 'REST',
  serviceUrl: url,
  restMethodType: 'POST',
  sampleRequest: '{"to":"{{emailto}}{{phoneto}}"}',
  serviceUsername: 'opsflow',
  servicePassword: password,
  isActive: true,
});

const basicPassword = (authorization: string | string[] | undefined) =>
  Buffer.from(String(authorization).replace(/^Basic /, ''), 'base64')
    .toString('utf8')
    .split(':')[1];

/** A test message to `to` for site-s through the active email channel (the process endpoint), sent as the ADMIN. */
const processEmail = (to: string) =>
  call(thisFile.api.url, 'POST', '/api/settings/communication/process', { token: admin, body: { channel: 'EMAIL', siteId: 'site-s', to, content: 'x' } });

test('a ciphertext copied from one configuration into another fails: 500 SECRET_INTEGRITY_FAILED, the send fails permanently, nothing reaches the peer; a truncated tag fails too', async () => {
  const peer = await startPeer(() => ({ status: 200 }));
  try {
    const mine = await call(thisFile.api.url, 'POST', '/api/settings/email', { token: admin, body: restConfig('mine', `${peer.url}/mail`, 'mine-Pa55word') });
    const theirs = await call(thisFile.api.url, 'POST', '/api/settings/email', {
      token: admin,
      body: { ...restConfig('theirs', `${peer.url}/mail`, 'theirs-Pa55word'), isActive: false },
    });
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    const storeMyPassword = (stored: string) =>
      thisFile.platform.db('settings.email_configuration').where({ id: mine.body.id }).update({ service_password: stored });
    const table = thisFile.platform.db('settings.email_configuration');
    const own = (await table.clone().where({ id: mine.body.id }).first()).service_password as string;
    const copied = (await table.clone().where({ id: theirs.body.id }).first()).service_password as string;
    await storeMyPassword(copied);

    expectProblem(await processEmail('a@peer.example'), 500, 'SECRET_INTEGRITY_FAILED');
    const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-s');
    const sent = await call(thisFile.api.url, 'POST', '/api/email/send', { token: editor, body: { templateId, to: 'b@peer.example', siteId: 'site-s' } });
    expect(sent.status).toBe(202);
    const log = await finalLog(thisFile.api.url, editor, templateId, sent.body.logId);
    expect(log).toEqual(expect.objectContaining({ status: 'FAILED', attempts: 1, error: expect.stringContaining('integrity') }));
    expect(peer.received).toEqual([]);

    // Its own ciphertext with the tag cut to 4 bytes: a forger needs 2^32 tries at most, so it is refused.
    const [version, iv, tag, ciphertext] = own.split('.');
    const truncated = [version, iv, Buffer.from(tag, 'base64url').subarray(0, 4).toString('base64url'), ciphertext].join('.');
    await storeMyPassword(truncated);
    expectProblem(await processEmail('c@peer.example'), 500, 'SECRET_INTEGRITY_FAILED');
    expect(peer.received).toEqual([]);

    // Its own, whole: it sends.
    await storeMyPassword(own);
    const processed = await processEmail('d@peer.example');
    expect(processed.body).toEqual({ status: 'SUCCESS', detail: 'sent' });
    expect(basicPassword(peer.received[0].headers.authorization)).toBe('mine-Pa55word');
  } finally {
    await peer.close();
  }
});

function rotate(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', 'secrets:rotate'], { cwd: path.resolve(__dirname, '..', '..'), env });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => resolve({ code, output }));
  });
}

test('a key rotation keeps every send working: the new key with the old as SECRETS_KEY_PREVIOUS reads both; `npm run secrets:rotate` re-encrypts; then the old key alone reads nothing', async () => {
  const peer = await startPeer(() => ({ status: 200 }));
  try {
    expect(
      (await call(thisFile.api.url, 'POST', '/api/settings/sms', { token: admin, body: restConfig('sms-peer', `${peer.url}/sms`, 'sms-Pa55word') })).status,
    ).toBe(201);
    const oldKey = thisFile.platform.config.secrets.key;
    const newKey = 'a-brand-new-secrets-key-0123456789';
    const send = (url: string) =>
      call(url, 'POST', '/api/settings/communication/process', { token: admin, body: { channel: 'SMS', siteId: 'site-s', to: '+15550001111', content: 'x' } });

    const during = await thisFile.platform.startApi({
      config: { ...thisFile.platform.config, secrets: { ...thisFile.platform.config.secrets, key: newKey, previousKey: oldKey } },
    });
    expect((await send(during.url)).body).toEqual({ status: 'SUCCESS', detail: 'sent' });

    const rotated = await rotate({ ...thisFile.platform.env, SECRETS_KEY: newKey, SECRETS_KEY_PREVIOUS: oldKey });
    expect(rotated).toEqual({ code: 0, output: expect.stringMatching(/Re-encrypted [1-9]\d* stored secret/) });
    expect(await rotate({ ...thisFile.platform.env, SECRETS_KEY: newKey, SECRETS_KEY_PREVIOUS: oldKey })).toEqual({
      code: 0,
      output: expect.stringContaining('Re-encrypted 0 stored secret'),
    });

    const after = await thisFile.platform.startApi({
      config: { ...thisFile.platform.config, secrets: { ...thisFile.platform.config.secrets, key: newKey, previousKey: null } },
    });
    expect((await send(after.url)).body).toEqual({ status: 'SUCCESS', detail: 'sent' });
    expectProblem(await send(thisFile.api.url), 500, 'SECRET_INTEGRITY_FAILED');
    expect(peer.received.map((request) => basicPassword(request.headers.authorization))).toEqual(['sms-Pa55word', 'sms-Pa55word']);
  } finally {
    await peer.close();
  }
});

test('a version-1 ciphertext (bound to no row, so copyable into any) is refused where a secret is used, naming the fix; `npm run secrets:rotate` rewrites it bound, and the send works', async () => {
  const peer = await startPeer(() => ({ status: 200 }));
  try {
    const created = await call(thisFile.api.url, 'POST', '/api/settings/email', { token: admin, body: restConfig('legacy', `${peer.url}/mail`, 'unused') });
    expect(created.status).toBe(201);
    // As an earlier release wrote it: SHA-256 of the key, no associated data.
    const key = createHash('sha256').update(`opsflow-secrets:${thisFile.platform.config.secrets.key}`).digest();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const ciphertext = Buffer.concat([cipher.update('legacy-Pa55word', 'utf8'), cipher.final()]);
    const legacy = ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
    await thisFile.platform.db('settings.email_configuration').where({ id: created.body.id }).update({ service_password: legacy });

    const refused = await processEmail('v1@peer.example');
    expectProblem(refused, 500, 'SECRET_INTEGRITY_FAILED');
    expect(refused.body.detail).toContain('secrets:rotate');
    expect(peer.received).toEqual([]);

    // The rotation test before this one left rows under a key this platform no longer holds: rotate names
    // those (exit 1), and rewrites this one.
    const rotated = await rotate({ ...thisFile.platform.env });
    expect(rotated.output).toMatch(/Re-encrypted [1-9]\d* stored secret/);
    expect(rotated.output).not.toContain(created.body.id);
    expect((await thisFile.platform.db('settings.email_configuration').where({ id: created.body.id }).first()).service_password).toMatch(/^v2\./);
    const processed = await processEmail('v1b@peer.example');
    expect(processed.body).toEqual({ status: 'SUCCESS', detail: 'sent' });
    expect(basicPassword(peer.received[0].headers.authorization)).toBe('legacy-Pa55word');
  } finally {
    await peer.close();
  }
});
