import { platformWithApi, RunningWorker } from '../support/platform';
import { call, expectProblem, HttpAnswer } from '../support/http';
import { capturedLogger, decodedPayloads, workflowShow } from '../support/observed';
import { fetch as undiciFetch } from 'undici';
import { guardedAgent } from '../../adapters/messaging/outbound';
import type { OutboundAllowance } from '../../lib/config';
import { callPeer } from '../../adapters/messaging/http-peer';
import { ChannelConfigRow } from '../../data/messaging/channel-configs';
import { finalLog, publishedTemplate, startPeer } from './harness';
import { integrationLogOf } from '../../data/messaging/integration-log';

const apiLog = capturedLogger();
const thisFile = platformWithApi({ apiDeps: () => ({ logger: apiLog.logger }) });
let worker: RunningWorker;
let admin: string;
let editor: string;
/** Every answer this file got, searched for secrets at the end. */
const answers: string[] = [];

const SMTP_PASSWORD = 'smtp-Pa55word-do-not-leak';
const SERVICE_PASSWORD = 'svc-Pa55word-do-not-leak';

beforeAll(async () => {
  worker = await thisFile.platform.startWorker(['messaging', 'approvals']);
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  editor = await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-p'] });
});

async function request(method: string, path: string, token: string, body?: unknown): Promise<HttpAnswer> {
  const answer = await call(thisFile.api.url, method, path, { token, body });
  answers.push(answer.text);
  return answer;
}

const SOAP_SAMPLE =
  '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><Send><To>{{emailto}}</To><Subject>{{emailsubject}}</Subject><Body>{{emailcontent}}</Body></Send></soap:Body></soap:Envelope>';
const REST_SAMPLE = '{"to": "{{emailto}}", "subject": "{{emailsubject}}", "html": "{{emailcontent}}"}';
const HOSTILE = 'a < b & "c" </soap:Body> ", "x": "y';

function soapConfig(serviceUrl: string, extra: Record<string, unknown> = {}) {
  return {
    configName: `soap-${Math.random()}`,
    transport: 'SOAP',
    serviceUrl,
    sampleRequest: SOAP_SAMPLE,
    soapMethodName: 'urn:Send',
    serviceUsername: 'opsflow',
    servicePassword: SERVICE_PASSWORD,
    isActive: true,
    ...extra,
  };
}

test('SOAP: the peer receives exactly the rendered request; hostile values arrive as text; a Fault fails the log with its reason; each call is in the integration log', async () => {
  let fault = false;
  const peer = await startPeer(() =>
    fault
      ? {
          status: 500,
          headers: { 'content-type': 'text/xml' },
          body: '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><soap:Fault><faultcode>soap:Server</faultcode><faultstring>Mailbox full</faultstring></soap:Fault></soap:Body></soap:Envelope>',
        }
      : { status: 200, headers: { 'content-type': 'text/xml' }, body: '<ok/>' },
  );
  try {
    expect((await request('POST', '/api/settings/email', admin, soapConfig(`${peer.url}/soap`))).status).toBe(201);
    const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-p', { subjectEn: '{{subject}}', bodyEn: '{{body}}' });
    const sent = await request('POST', '/api/email/send', editor, {
      templateId,
      to: 'soap@peer.example',
      siteId: 'site-p',
      variables: { subject: HOSTILE, body: HOSTILE },
    });
    expect(await finalLog(thisFile.api.url, editor, templateId, sent.body.logId)).toEqual(expect.objectContaining({ status: 'SUCCESS' }));

    const [received] = peer.received;
    expect(received.method).toBe('POST');
    expect(received.url).toBe('/soap');
    expect(received.headers['content-type']).toBe('text/xml; charset=utf-8');
    expect(received.headers.soapaction).toBe('urn:Send');
    expect(received.headers.authorization).toBe(`Basic ${Buffer.from(`opsflow:${SERVICE_PASSWORD}`).toString('base64')}`);
    const escapedSubject = 'a &lt; b &amp; &quot;c&quot; &lt;/soap:Body&gt; &quot;, &quot;x&quot;: &quot;y';
    // The body is HTML (its value HTML-escaped, in the locale's root element), then XML-escaped as a whole.
    const escapedBody =
      '&lt;div lang=&quot;en&quot;&gt;a &amp;lt; b &amp;amp; &amp;quot;c&amp;quot; &amp;lt;/soap:Body&amp;gt; &amp;quot;, &amp;quot;x&amp;quot;: &amp;quot;y&lt;/div&gt;';
    expect(received.body).toBe(
      `<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><Send><To>soap@peer.example</To><Subject>${escapedSubject}</Subject><Body>${escapedBody}</Body></Send></soap:Body></soap:Envelope>`,
    );

    fault = true;
    const faulted = await request('POST', '/api/email/send', editor, {
      templateId,
      to: 'soap@peer.example',
      siteId: 'site-p',
      variables: { subject: 's', body: 'b' },
    });
    expect(await finalLog(thisFile.api.url, editor, templateId, faulted.body.logId)).toEqual(
      expect.objectContaining({ status: 'FAILED', error: 'SOAP Fault: Mailbox full', attempts: 1 }),
    );

    const calls = await thisFile.platform
      .db('integration.integration_log')
      .where({ url: `${peer.url}/soap` })
      .orderBy('id');
    expect(calls.map((row) => [row.site_id, row.outcome, row.status_code, row.operation])).toEqual([
      ['site-p', 'SUCCESS', 200, 'urn:Send'],
      ['site-p', 'FAILED', 500, 'urn:Send'],
    ]);
    expect(calls[1].error).toBe('SOAP Fault: Mailbox full');
  } finally {
    await peer.close();
  }
});

test('REST: the peer receives the rendered JSON, structure intact; a 500 fails the log after the retries; a redirect is not followed', async () => {
  let status = 200;
  const peer = await startPeer((received) => (received.url === '/moved' ? { status: 302, headers: { location: `/rest` } } : { status }));
  try {
    const config = {
      configName: 'rest',
      transport: 'REST',
      serviceUrl: `${peer.url}/rest`,
      sampleRequest: REST_SAMPLE,
      restMethodType: 'PUT',
      serviceUsername: 'opsflow',
      servicePassword: SERVICE_PASSWORD,
      isActive: true,
    };
    const created = await request('POST', '/api/settings/email', admin, config);
    expect(created.status).toBe(201);
    const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-p', { subjectEn: '{{subject}}', bodyEn: 'x' });
    const sent = await request('POST', '/api/email/send', editor, { templateId, to: 'rest@peer.example', siteId: 'site-p', variables: { subject: HOSTILE } });
    expect(await finalLog(thisFile.api.url, editor, templateId, sent.body.logId)).toEqual(expect.objectContaining({ status: 'SUCCESS' }));
    const [received] = peer.received;
    expect(received.method).toBe('PUT');
    expect(received.headers['content-type']).toBe('application/json');
    expect(received.headers.authorization).toBe(`Basic ${Buffer.from(`opsflow:${SERVICE_PASSWORD}`).toString('base64')}`);
    expect(JSON.parse(received.body)).toEqual({ to: 'rest@peer.example', subject: HOSTILE, html: '<div lang="en">x</div>' });

    status = 500;
    const failing = await request('POST', '/api/email/send', editor, { templateId, to: 'rest@peer.example', siteId: 'site-p', variables: { subject: 's' } });
    expect(await finalLog(thisFile.api.url, editor, templateId, failing.body.logId)).toEqual(
      expect.objectContaining({ status: 'FAILED', error: 'REST peer answered 500', attempts: 4 }),
    );

    await request('PUT', `/api/settings/email/${created.body.id}`, admin, { ...config, serviceUrl: `${peer.url}/moved`, servicePassword: undefined });
    const redirected = await request('POST', '/api/email/send', editor, { templateId, to: 'rest@peer.example', siteId: 'site-p', variables: { subject: 's' } });
    expect(await finalLog(thisFile.api.url, editor, templateId, redirected.body.logId)).toEqual(
      expect.objectContaining({ status: 'FAILED', error: expect.stringContaining('302') }),
    );
    expect(peer.received.filter((entry) => entry.url === '/moved')).toHaveLength(1);
    expect(peer.received.filter((entry) => entry.url === '/rest')).toHaveLength(1 + 4);
    expect((await request('GET', `/api/settings/email/${created.body.id}`, admin)).body.hasServicePassword).toBe(true);
  } finally {
    await peer.close();
  }
});

test('configurations: passwords are encrypted at rest and never answered; a tampered ciphertext fails loudly; bad configurations are 400 and change nothing', async () => {
  const created = await request('POST', '/api/settings/email', admin, {
    configName: 'smtp-secret',
    transport: 'SMTP',
    smtpHost: '127.0.0.1',
    smtpPort: 2525,
    smtpUsername: 'u',
    smtpPassword: SMTP_PASSWORD,
  });
  expect(created.status).toBe(201);
  expect(created.body).toEqual(expect.objectContaining({ hasSmtpPassword: true, isActive: false }));
  expect(created.body).not.toHaveProperty('smtpPassword');
  const stored = await thisFile.platform.db('settings.email_configuration').where({ id: created.body.id }).first();
  expect(stored.smtp_password).not.toContain(SMTP_PASSWORD);
  expect(stored.smtp_password).toMatch(/^v2\./);
  expectProblem(
    await request('POST', '/api/settings/email', admin, { configName: 'smtp-secret', transport: 'SMTP', smtpHost: 'h', smtpPort: 25 }),
    409,
    'CONFIG_NAME_TAKEN',
  );

  const before = await thisFile.platform.db('settings.email_configuration').count({ n: '*' }).first();
  expectProblem(
    await request('POST', '/api/settings/email', admin, soapConfig('http://peer.example/soap', { sampleRequest: '<soap:Envelope><unclosed></soap:Envelope>' })),
    400,
    'VALIDATION_FAILED',
  );
  expectProblem(
    await request('POST', '/api/settings/email', admin, {
      configName: 'r',
      transport: 'REST',
      serviceUrl: 'http://peer.example',
      restMethodType: 'POST',
      sampleRequest: '{"to": {{emailto}}',
    }),
    400,
    'VALIDATION_FAILED',
  );
  expectProblem(await request('POST', '/api/settings/email', admin, soapConfig('ftp://peer.example/soap')), 400, 'VALIDATION_FAILED');
  expectProblem(await request('POST', '/api/settings/email', admin, { configName: 'smtp', transport: 'SMTP' }), 400, 'VALIDATION_FAILED');
  expectProblem(await request('POST', '/api/settings/sms', admin, { configName: 'sms', transport: 'SMTP' }), 400, 'VALIDATION_FAILED');
  expect(await thisFile.platform.db('settings.email_configuration').count({ n: '*' }).first()).toEqual(before);
  const spare = await request('POST', '/api/settings/sms', admin, {
    configName: 'spare',
    transport: 'REST',
    serviceUrl: 'http://peer.example',
    restMethodType: 'GET',
  });
  expect(spare.status).toBe(201);
  expect((await request('DELETE', `/api/settings/sms/${spare.body.id}`, admin)).status).toBe(204);
  expectProblem(await request('GET', `/api/settings/sms/${spare.body.id}`, admin), 404, 'NOT_FOUND');
  expectProblem(await call(thisFile.api.url, 'GET', '/api/settings/email', { token: editor }), 403, 'FORBIDDEN');

  // One changed character of the ciphertext (its second-to-last, whose six bits are all data; changed to
  // another letter than it was, which the check before did not always do): refused, loudly.
  const at = stored.smtp_password.length - 2;
  const flipped = stored.smtp_password.slice(0, at) + (stored.smtp_password[at] === 'A' ? 'B' : 'A') + stored.smtp_password.slice(at + 1);
  expect(flipped).not.toBe(stored.smtp_password);
  await thisFile.platform.db('settings.email_configuration').where({ id: created.body.id }).update({ smtp_password: flipped });
  expectProblem(
    await request('POST', '/api/settings/communication/validate', admin, { channel: 'EMAIL', configId: created.body.id }),
    500,
    'SECRET_INTEGRITY_FAILED',
  );
});

test('SMS through REST with process; validate checks the rendered sample without sending', async () => {
  const peer = await startPeer(() => ({ status: 202 }));
  try {
    const sms = await request('POST', '/api/settings/sms', admin, {
      configName: 'sms-rest',
      transport: 'REST',
      serviceUrl: `${peer.url}/sms`,
      restMethodType: 'POST',
      sampleRequest: '{"to":"{{phoneto}}","text":"{{messagecontent}}"}',
      isActive: true,
    });
    expect(sms.status).toBe(201);
    const checked = await request('POST', '/api/settings/communication/validate', admin, { channel: 'SMS' });
    expect(checked.body).toEqual({ ok: true, transport: 'REST', detail: 'ok', latencyMs: expect.any(Number) });
    expect(peer.received).toHaveLength(0);
    const processed = await request('POST', '/api/settings/communication/process', admin, {
      channel: 'SMS',
      siteId: 'site-p',
      to: '+15551234567',
      content: 'Code "42"',
    });
    expect(processed.body).toEqual({ status: 'SUCCESS', detail: 'sent' });
    expect(JSON.parse(peer.received[0].body)).toEqual({ to: '+15551234567', text: 'Code "42"' });
    expectProblem(
      await request('POST', '/api/settings/communication/process', admin, { channel: 'SMS', siteId: 'site-p', to: '555-1234', content: 'x' }),
      400,
      'VALIDATION_FAILED',
    );
    expect(
      (
        await thisFile.platform
          .db('integration.integration_log')
          .where({ url: `${peer.url}/sms` })
          .first()
      ).site_id,
    ).toBe('site-p');
  } finally {
    await peer.close();
  }
});

test('in production a service_url on a loopback, private or metadata address is refused unless listed in OUTBOUND_ALLOW', async () => {
  const production = await thisFile.platform.startApi({
    config: {
      ...thisFile.platform.config,
      production: true,
      outboundAllow: [
        { purpose: 'rest', host: 'allowed.local', port: 80 },
        { purpose: 'rest', host: '127.0.0.2', port: 9 },
      ],
    },
  });
  const post = (serviceUrl: string) =>
    call(production.url, 'POST', '/api/settings/sms', {
      token: admin,
      body: { configName: `p-${serviceUrl}`, transport: 'REST', serviceUrl, restMethodType: 'POST', sampleRequest: '{}' },
    });
  for (const url of [
    'http://127.0.0.1:9/x',
    'http://10.1.2.3/x',
    'http://192.168.1.1/x',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]/x',
    'http://localhost/x',
    // IPv6 forms of IPv4 special-purpose addresses, and the other special-purpose ranges.
    'http://[::ffff:127.0.0.1]/x',
    'http://[::ffff:169.254.169.254]/x',
    'http://[::ffff:10.0.0.1]/x',
    'http://[::127.0.0.1]/x',
    'http://[64:ff9b::a9fe:a9fe]/x',
    'http://[2002:a9fe:a9fe::]/x',
    'http://198.18.0.1/x',
    'http://224.0.0.1/x',
    'http://255.255.255.255/x',
  ]) {
    expectProblem(await post(url), 400, 'OUTBOUND_NOT_ALLOWED');
  }
  expect((await post('http://127.0.0.2:9/x')).status).toBe(201);
  await production.close();
});

test('at send time too, in production, the transport refuses a peer that resolves to a loopback address: nothing reaches it and the call is logged FAILED', async () => {
  // A configuration saved before the address became private (or by a development API) is checked again at
  // every send, by the send activity's transport itself.
  const peer = await startPeer(() => ({ status: 200, body: 'ok' }));
  try {
    const config = {
      transport: 'REST',
      service_url: `${peer.url}/sms`,
      rest_method_type: 'POST',
      sample_request: '{"text": "{{content}}"}',
      service_username: null,
    } as ChannelConfigRow;
    const send = (allow: OutboundAllowance[]) =>
      callPeer({
        record: integrationLogOf(thisFile.platform.db),
        config,
        password: null,
        tokens: { content: 'hi' },
        siteId: 'site-p',
        component: 'SMS',
        outbound: { production: true, purpose: 'rest', allow },
      });
    await expect(send([])).rejects.toThrow(
      /127\.0\.0\.1, a loopback, private, link-local, metadata or other special-purpose address; list it in OUTBOUND_ALLOW/,
    );
    expect(peer.received).toEqual([]);
    const logged = await thisFile.platform
      .db('integration.integration_log')
      .where({ url: `${peer.url}/sms` })
      .orderBy('id');
    expect(logged.map((row) => [row.outcome, row.status_code])).toEqual([['FAILED', null]]);
    // The IPv6-mapped spelling of the same loopback peer (the URL parser writes it ::ffff:7f00:1).
    const mapped = { ...config, service_url: `${peer.url.replace('127.0.0.1', '[::ffff:127.0.0.1]')}/sms` } as ChannelConfigRow;
    await expect(
      callPeer({
        record: integrationLogOf(thisFile.platform.db),
        config: mapped,
        password: null,
        tokens: { content: 'hi' },
        siteId: 'site-p',
        component: 'SMS',
        outbound: { production: true, purpose: 'rest', allow: [] },
      }),
    ).rejects.toThrow(/special-purpose address/);
    expect(peer.received).toEqual([]);
    // Allowed for another purpose, or on another port: still refused; for REST on the peer's port: reached.
    await expect(
      send([
        { purpose: 'soap', host: '127.0.0.1', port: Number(new URL(peer.url).port) },
        { purpose: 'rest', host: '127.0.0.1', port: Number(new URL(peer.url).port) + 1 },
      ]),
    ).rejects.toThrow(/list it in OUTBOUND_ALLOW as rest:host:port/);
    expect(peer.received).toEqual([]);
    await send([{ purpose: 'rest', host: '127.0.0.1', port: Number(new URL(peer.url).port) }]);
    expect(peer.received.map((request) => request.body)).toEqual(['{"text": "hi"}']);
  } finally {
    await peer.close();
  }
});

test('no answer, no API log line and no Temporal history of a send contains a stored password', async () => {
  const peer = await startPeer(() => ({ status: 200, body: `echo ${SERVICE_PASSWORD}` }));
  try {
    await request('POST', '/api/settings/email', admin, soapConfig(`${peer.url}/soap`, { configName: 'leak-check' }));
    const templateId = await publishedTemplate(thisFile.api.url, editor, 'site-p');
    const sent = await request('POST', '/api/email/send', editor, { templateId, to: 'leak@peer.example', siteId: 'site-p' });
    await finalLog(thisFile.api.url, editor, templateId, sent.body.logId);
    for (const list of ['/api/settings/email', '/api/settings/sms', `/api/email/send/${templateId}/logs`]) await request('GET', list, admin);

    const history = workflowShow(thisFile.platform, sent.body.workflowId);
    expect(history).toContain(sent.body.workflowId);
    const integrationRows = JSON.stringify(await thisFile.platform.db('integration.integration_log').select('*'));
    expect(integrationRows).toContain('echo ***');
    for (const haystack of [
      answers.join('\n'),
      apiLog.lines.join(''),
      worker.output(),
      history,
      await decodedPayloads(thisFile.platform, history),
      integrationRows,
    ]) {
      expect(haystack).not.toContain(SMTP_PASSWORD);
      expect(haystack).not.toContain(SERVICE_PASSWORD);
    }
    expect(answers.length).toBeGreaterThan(10);
    expect(apiLog.lines.length).toBeGreaterThan(10);
  } finally {
    await peer.close();
  }
});

test('the connection itself is checked: a name resolved at connect time to a loopback address is refused before any byte reaches it', async () => {
  // What DNS rebinding exploits is a check on one resolution and a connection on another: here the only
  // resolution is the connection's own (undici's connect lookup), with no earlier check to pass.
  const peer = await startPeer(() => ({ status: 200, body: 'ok' }));
  try {
    const url = `${peer.url.replace('127.0.0.1', 'localhost')}/sms`;
    const answer = await undiciFetch(url, { method: 'POST', body: 'x', dispatcher: guardedAgent({ production: true, purpose: 'rest', allow: [] }, null) }).then(
      () => null,
      (error: Error) => error,
    );
    expect(String((answer as Error & { cause?: Error })?.cause?.message ?? answer)).toMatch(/localhost resolves to 127\.0\.0\.1, a loopback/);
    expect(peer.received).toEqual([]);
    const allowed = await undiciFetch(url, {
      method: 'POST',
      body: 'x',
      dispatcher: guardedAgent({ production: true, purpose: 'rest', allow: [] }, 'localhost'),
    });
    expect(allowed.status).toBe(200);
    expect(peer.received).toHaveLength(1);
  } finally {
    await peer.close();
  }
});
