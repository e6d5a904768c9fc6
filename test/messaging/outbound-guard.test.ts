import http from 'node:http';
import { SMTPServer } from 'smtp-server';
import { AddressInfo } from 'node:net';
import { attachPlatform, RunningApi, TestPlatform } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { guardedFetch, HostResolver, smtpRelayUrl } from '../../adapters/messaging/outbound';
import { loadConfig, OutboundAllowance } from '../../lib/config';

/**
 * The outbound guard in production, through the API: every special-purpose address is refused at send time
 * as well as on save; a name rebound to loopback between the check and the connection is refused; a peer at
 * a public address is reached.
 */
let platform: TestPlatform;
let development: RunningApi;
let admin: string;
const received: string[] = [];
let loopbackPeer: http.Server;
let loopbackPort: number;

/** A resolver the test controls: each name answers what its list says next (the last answer repeats). */
const answers = new Map<string, string[]>();
const resolver: HostResolver = async (host) => {
  const queue = answers.get(host.toLowerCase());
  if (!queue) throw Object.assign(new Error(`${host} does not resolve`), { code: 'ENOTFOUND' });
  const address = queue.length > 1 ? queue.shift()! : queue[0];
  return [{ address, family: address.includes(':') ? 6 : 4 }];
};

const production = (extra: { outboundAllow?: OutboundAllowance[] } = {}) =>
  platform.startApi({ config: { ...platform.config, production: true, outboundAllow: extra.outboundAllow ?? [] }, resolveHost: resolver });

beforeAll(async () => {
  platform = await attachPlatform();
  development = await platform.startApi();
  await platform.startWorker(['approvals']);
  admin = await platform.token({ sub: 'ada', roles: ['ADMIN'] });
  loopbackPeer = http.createServer((request, response) => {
    received.push(`${request.method} ${request.url}`);
    response.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => loopbackPeer.listen(0, '127.0.0.1', resolve));
  loopbackPort = (loopbackPeer.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => loopbackPeer?.close(resolve));
  await platform?.close();
});

/** An active SMS configuration for `url`, saved through the development API (production would refuse most). */
async function activePeer(url: string): Promise<void> {
  const saved = await call(development.url, 'POST', '/api/settings/sms', {
    token: admin,
    body: { configName: `peer ${url}`, transport: 'REST', serviceUrl: url, restMethodType: 'POST', sampleRequest: '{"to":"{{phoneto}}"}', isActive: true },
  });
  expect(saved.status).toBe(201);
}

const sendSms = (api: RunningApi) =>
  call(api.url, 'POST', '/api/settings/communication/process', { token: admin, body: { channel: 'SMS', siteId: 'site-o', to: '+15550003333', content: 'x' } });

test('at send time, in production, every special-purpose address of the finding gets 400 OUTBOUND_NOT_ALLOWED, and nothing is sent', async () => {
  const api = await production();
  const port = loopbackPort;
  for (const host of [
    '[::ffff:127.0.0.1]',
    '[::ffff:169.254.169.254]',
    '[::ffff:10.0.0.1]',
    '[::127.0.0.1]',
    '[64:ff9b::a9fe:a9fe]',
    '[2002:a9fe:a9fe::]',
    '198.18.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '127.0.0.1',
  ]) {
    await activePeer(`http://${host}:${port}/sms`);
    const answer = await sendSms(api);
    expectProblem(answer, 400, 'OUTBOUND_NOT_ALLOWED');
  }
  expect(received).toEqual([]);
});

test('DNS rebinding: a name that resolves to a public address when saved and to loopback when connected is refused at the connection, and nothing reaches the loopback peer', async () => {
  const api = await production();
  answers.set('rebind.example', ['93.184.216.34', '127.0.0.1']);
  const saved = await call(api.url, 'POST', '/api/settings/sms', {
    token: admin,
    body: {
      configName: 'rebinding',
      transport: 'REST',
      serviceUrl: `http://rebind.example:${loopbackPort}/sms`,
      restMethodType: 'POST',
      sampleRequest: '{"to":"{{phoneto}}"}',
      isActive: true,
    },
  });
  expect(saved.status).toBe(201);
  const answer = await sendSms(api);
  expectProblem(answer, 400, 'OUTBOUND_NOT_ALLOWED');
  expect(answer.body.detail).toContain('rebind.example resolves to 127.0.0.1');
  expect(received).toEqual([]);
});

test('a peer at a public address is reached in production; an SMTP relay too, its socket going to the address the guard checked (the name resolves only through the guard)', async () => {
  // A bridge network with a public (not special-purpose) subnet puts its gateway address on this host: a
  // real listener there is, to the guard, a peer on the Internet.
  const docker = platform.docker.docker;
  const name = `${platform.config.deploy.scope}-public-peer`;
  for (const stale of await docker.listNetworks({ filters: { name: [name] } }))
    await docker
      .getNetwork(stale.Id)
      .remove()
      .catch(() => undefined);
  const network = await docker.createNetwork({
    Name: name,
    Driver: 'bridge',
    Labels: { 'opsflow.scope': platform.config.deploy.scope },
    IPAM: { Config: [{ Subnet: '44.201.7.0/24', Gateway: '44.201.7.1' }] },
  });
  const peer = http.createServer((request, response) => {
    received.push(`public ${request.method} ${request.url}`);
    response.end('{"ok":true}');
  });
  const relayed: string[] = [];
  const relay = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    // The platform's pooled connection stays open; closing the relay must not wait for it.
    closeTimeout: 100,
    logger: false,
    onRcptTo: (address, _session, callback) => {
      relayed.push(address.address);
      callback();
    },
    onData: (stream, _session, callback) => {
      stream.resume();
      stream.on('end', () => callback());
    },
  });
  try {
    await new Promise<void>((resolve) => peer.listen(0, '44.201.7.1', resolve));
    answers.set('public-peer.example', ['44.201.7.1']);
    const api = await production();
    await activePeer(`http://public-peer.example:${(peer.address() as AddressInfo).port}/sms`);
    expect((await sendSms(api)).body).toEqual({ status: 'SUCCESS', detail: 'sent' });
    expect(received).toEqual(['public POST /sms']);

    // mail.relay.example exists only in the test's resolver: a transport that looked the name up itself
    // could not connect at all.
    await new Promise<void>((resolve) => relay.listen(0, '44.201.7.1', resolve));
    answers.set('mail.relay.example', ['44.201.7.1']);
    const saved = await call(development.url, 'POST', '/api/settings/email', {
      token: admin,
      body: {
        configName: 'public relay',
        transport: 'SMTP',
        smtpHost: 'mail.relay.example',
        smtpPort: (relay.server.address() as AddressInfo).port,
        smtpAllowPlain: true,
        isActive: true,
      },
    });
    expect(saved.status).toBe(201);
    const mailed = await call(api.url, 'POST', '/api/settings/communication/process', {
      token: admin,
      body: { channel: 'EMAIL', siteId: 'site-o', to: 'someone@relay.example', subject: 'hi', content: '<p>hi</p>' },
    });
    expect(mailed.body).toEqual({ status: 'SUCCESS', detail: 'sent' });
    expect(relayed).toEqual(['someone@relay.example']);

    // Rebound to loopback before the next send: refused before any connection.
    answers.set('mail.relay.example', ['127.0.0.1']);
    expectProblem(
      await call(api.url, 'POST', '/api/settings/communication/process', {
        token: admin,
        body: { channel: 'EMAIL', siteId: 'site-o', to: 'other@relay.example', content: 'x' },
      }),
      400,
      'OUTBOUND_NOT_ALLOWED',
    );
    expect(relayed).toEqual(['someone@relay.example']);
  } finally {
    await new Promise((resolve) => peer.close(resolve));
    await new Promise<void>((resolve) => relay.close(() => resolve()));
    await network.remove().catch(() => undefined);
  }
});

test('OUTBOUND_ALLOW takes purpose:host:port entries; a bare host, an unknown purpose or a missing port stops the start with the variable named', () => {
  const env = { ...process.env, NODE_ENV: 'test' };
  expect(loadConfig({ ...env, OUTBOUND_ALLOW: 'smtp:relay.internal:587, jwks:IdP.internal:443,soap:[fd00::7]:8443' }).outboundAllow).toEqual([
    { purpose: 'smtp', host: 'relay.internal', port: 587 },
    { purpose: 'jwks', host: 'idp.internal', port: 443 },
    { purpose: 'soap', host: 'fd00::7', port: 8443 },
  ]);
  for (const entry of [
    'relay.internal',
    'smtp:relay.internal',
    'ftp:relay.internal:21',
    'smtp:relay.internal:0',
    'smtp:relay.internal:70000',
    'soap:fd00::7:8443',
  ]) {
    expect(() => loadConfig({ ...env, OUTBOUND_ALLOW: entry })).toThrow(/OUTBOUND_ALLOW/);
  }
});

test('an allowance opens one host to one purpose on one port: an SMTP relay allowed does not let a SOAP component or a REST peer reach that host, on its port or another', async () => {
  answers.set('relay.internal', ['127.0.0.1']);
  const allowances = loadConfig({
    ...process.env,
    NODE_ENV: 'test',
    OUTBOUND_ALLOW: `smtp:relay.internal:${loopbackPort},rest:relay.internal:${loopbackPort + 1}`,
  }).outboundAllow;
  const api = await production({ outboundAllow: allowances });
  const editor = await platform.token({ sub: 'eve', roles: ['EDITOR'], sites: ['site-o'] });
  // A SOAP component on the relay's host and port: its invocation is refused.
  const component = await call(api.url, 'POST', '/api/integration/soap-components', {
    token: editor,
    body: {
      siteId: 'site-o',
      name: 'crm probe',
      serviceUrl: `http://relay.internal:${loopbackPort}/relay-probe`,
      soapMethodName: 'urn:probe#Probe',
      sampleRequest: '<Probe/>',
    },
  });
  expect(component.status).toBe(201);
  expect((await call(api.url, 'POST', `/api/integration/soap-components/${component.body.id}/publish`, { token: editor })).status).toBe(200);
  expectProblem(
    await call(api.url, 'POST', `/api/integration/soap-components/${component.body.id}/invoke`, { token: editor, body: { variables: {} } }),
    400,
    'OUTBOUND_NOT_ALLOWED',
  );
  // A REST peer on the relay's port (allowed for SMTP only): refused on save; on the port allowed for REST: saved.
  const restOn = (port: number) =>
    call(api.url, 'POST', '/api/settings/sms', {
      token: admin,
      body: {
        configName: `rest ${port}`,
        transport: 'REST',
        serviceUrl: `http://relay.internal:${port}/relay-sms`,
        restMethodType: 'POST',
        sampleRequest: '{}',
      },
    });
  expectProblem(await restOn(loopbackPort), 400, 'OUTBOUND_NOT_ALLOWED');
  expect((await restOn(loopbackPort + 1)).status).toBe(201);
  // Saved through the development API and sent by the production one: refused at the connection too.
  await activePeer(`http://relay.internal:${loopbackPort}/relay-sms`);
  expectProblem(await sendSms(api), 400, 'OUTBOUND_NOT_ALLOWED');
  // An SMTP relay on the port allowed for REST: refused; on the port allowed for SMTP: saved.
  const smtpOn = (port: number) =>
    call(api.url, 'POST', '/api/settings/email', {
      token: admin,
      body: { configName: `smtp ${port}`, transport: 'SMTP', smtpHost: 'relay.internal', smtpPort: port },
    });
  expectProblem(await smtpOn(loopbackPort + 1), 400, 'OUTBOUND_NOT_ALLOWED');
  expect((await smtpOn(loopbackPort)).status).toBe(201);
  // A host that brings a port of its own (the guard would check that one, the socket would use smtpPort): not a host.
  for (const smtpHost of [`relay.internal:${loopbackPort}/`, `relay.internal:${loopbackPort}`, `user@relay.internal`, 'relay.internal/x']) {
    const hostile = await call(api.url, 'POST', '/api/settings/email', {
      token: admin,
      body: { configName: `smtp ${smtpHost}`, transport: 'SMTP', smtpHost, smtpPort: 22 },
    });
    expectProblem(hostile, 400, 'VALIDATION_FAILED');
  }
  expect(() => smtpRelayUrl(`relay.internal:${loopbackPort}/`, 22)).toThrow(/not a host name or an IP address/);
  expect(received.filter((line) => line.includes('/relay-'))).toEqual([]);
});

test("the identity provider's allowance (jwks) is its own: a SOAP allowance on the same host and port does not open it, and a jwks one does not open SOAP", async () => {
  const url = `http://127.0.0.1:${loopbackPort}/relay-jwks`;
  const fetchAs = (purpose: 'jwks' | 'soap', allow: OutboundAllowance[]) =>
    guardedFetch(url, { redirect: 'error' }, { production: true, purpose, allow, resolve: resolver });
  await expect(fetchAs('jwks', [{ purpose: 'soap', host: '127.0.0.1', port: loopbackPort }])).rejects.toThrow(/list it in OUTBOUND_ALLOW as jwks:host:port/);
  await expect(fetchAs('soap', [{ purpose: 'jwks', host: '127.0.0.1', port: loopbackPort }])).rejects.toThrow(/list it in OUTBOUND_ALLOW as soap:host:port/);
  expect(received.filter((line) => line.includes('/relay-jwks'))).toEqual([]);
  expect((await fetchAs('jwks', [{ purpose: 'jwks', host: '127.0.0.1', port: loopbackPort }])).status).toBe(200);
  expect(received.filter((line) => line.includes('/relay-jwks'))).toHaveLength(1);
});
