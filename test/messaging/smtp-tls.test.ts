import { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { attachPlatform, RunningApi, TestPlatform } from '../support/platform';
import { call } from '../support/http';

/**
 * A real SMTP server that offers STARTTLS (smtp-server, with its own self-signed certificate): the password
 * never travels in clear to it unless the configuration explicitly says plain.
 */
let platform: TestPlatform;
let api: RunningApi;
let admin: string;
let server: SMTPServer;
let port: number;
const logins: Array<{ user: string | undefined; secure: boolean }> = [];

/** A relay on loopback that takes any login before TLS and records it, with whether the session was secure. */
async function recordingRelay(options: { disabledCommands?: string[] }): Promise<SMTPServer> {
  const relay = new SMTPServer({
    ...options,
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth: (auth, session, callback) => {
      logins.push({ user: auth.username, secure: session.secure });
      callback(null, { user: auth.username });
    },
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return relay;
}

beforeAll(async () => {
  platform = await attachPlatform();
  api = await platform.startApi();
  admin = await platform.token({ sub: 'ada', roles: ['ADMIN'] });
  // STARTTLS offered; AUTH allowed before it, so that a client that skips the upgrade is seen doing so.
  server = await recordingRelay({});
  port = (server.server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await platform?.close();
});

const configure = async (name: string, extra: Record<string, unknown>) => {
  const created = await call(api.url, 'POST', '/api/settings/email', {
    token: admin,
    body: { configName: name, transport: 'SMTP', smtpHost: '127.0.0.1', smtpPort: port, smtpUsername: name, smtpPassword: 'never-in-clear', ...extra },
  });
  expect(created.status).toBe(201);
  return created.body.id as string;
};
const validate = (configId: string) => call(api.url, 'POST', '/api/settings/communication/validate', { token: admin, body: { channel: 'EMAIL', configId } });

test('by default a server that offers STARTTLS is spoken to over TLS: a certificate it cannot trust fails the check, and the password was not sent in clear', async () => {
  const checked = await validate(await configure('by-default', {}));
  expect(checked.body).toEqual(expect.objectContaining({ ok: false, transport: 'SMTP', detail: expect.stringMatching(/certificate/i) }));
  expect(logins.filter((login) => login.user === 'by-default')).toEqual([]);
});

test('only a configuration that says plain (smtpAllowPlain) logs in without TLS', async () => {
  const id = await configure('plain-on-purpose', { smtpAllowPlain: true });
  expect((await call(api.url, 'GET', `/api/settings/email/${id}`, { token: admin })).body.smtpAllowPlain).toBe(true);
  expect((await validate(id)).body).toEqual(expect.objectContaining({ ok: true }));
  expect(logins.filter((login) => login.user === 'plain-on-purpose')).toEqual([{ user: 'plain-on-purpose', secure: false }]);
});

test('a relay that offers no STARTTLS (an attacker stripped it) gets no AUTH: with credentials configured, TLS is required unless smtpAllowPlain says otherwise', async () => {
  const stripped = await recordingRelay({ disabledCommands: ['STARTTLS'] });
  try {
    const created = await call(api.url, 'POST', '/api/settings/email', {
      token: admin,
      body: {
        configName: 'stripped',
        transport: 'SMTP',
        smtpHost: '127.0.0.1',
        smtpPort: (stripped.server.address() as AddressInfo).port,
        smtpUsername: 'stripped',
        smtpPassword: 'never-in-clear',
      },
    });
    expect(created.status).toBe(201);
    const checked = await validate(created.body.id);
    expect(checked.body).toEqual(expect.objectContaining({ ok: false, transport: 'SMTP', detail: expect.stringMatching(/STARTTLS/) }));
    expect(logins.filter((login) => login.user === 'stripped')).toEqual([]);
  } finally {
    await new Promise<void>((resolve) => stripped.close(() => resolve()));
  }
});
