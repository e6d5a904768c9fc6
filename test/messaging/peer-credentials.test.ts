import { platformWithApi } from '../support/platform';
import { call } from '../support/http';
import { archiveOutcome, globalRetention } from '../archival/harness';
import { startPeer } from './harness';
import { ensureLogPartitions } from '../../data/archival/log-partitions';

/**
 * A peer's credentials (an API key in its URL's query, the stored password substituted into its body) reach
 * the peer, and nowhere else: not the integration log, not the archive CSV every site member can download.
 */
const thisFile = platformWithApi();
let admin: string;

const KEY_IN_QUERY = 'SECRET-query-key-7f3a';
const PASSWORD_IN_BODY = 'SECRET-body-password-91c2';

beforeAll(async () => {
  await thisFile.platform.startWorker(['messaging', 'archival'], { API_INTERNAL_URL: thisFile.api.url });
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
});

test('a REST peer with ?apikey= in its URL and the password token in its body: the peer gets both; integration_log and the INTEGRATION_LOG archive CSV keep neither', async () => {
  const peer = await startPeer(() => ({ status: 200, body: '{"accepted":true}' }));
  try {
    const created = await call(thisFile.api.url, 'POST', '/api/settings/sms', {
      token: admin,
      body: {
        configName: 'keyed-peer',
        transport: 'REST',
        serviceUrl: `${peer.url}/sms?apikey=${KEY_IN_QUERY}&region=eu`,
        restMethodType: 'POST',
        sampleRequest: '{"to":"{{phoneto}}","text":"{{messagecontent}}","auth":{"password":"{{servicePassword}}"}}',
        servicePassword: PASSWORD_IN_BODY,
        isActive: true,
      },
    });
    expect(created.status).toBe(201);
    const sent = await call(thisFile.api.url, 'POST', '/api/settings/communication/process', {
      token: admin,
      body: { channel: 'SMS', siteId: 'site-c', to: '+15550002222', content: 'hello' },
    });
    expect(sent.body).toEqual({ status: 'SUCCESS', detail: 'sent' });
    // The peer got what it needs.
    expect(peer.received[0].url).toBe(`/sms?apikey=${KEY_IN_QUERY}&region=eu`);
    expect(JSON.parse(peer.received[0].body)).toEqual({ to: '+15550002222', text: 'hello', auth: { password: PASSWORD_IN_BODY } });

    const rows = await thisFile.platform.db('integration.integration_log').where({ site_id: 'site-c' });
    expect(rows).toHaveLength(1);
    const logged = JSON.stringify(rows);
    expect(logged).not.toContain(KEY_IN_QUERY);
    expect(logged).not.toContain(PASSWORD_IN_BODY);
    // Every query value is masked but those of a short allow-list of paging and format words (log-masking.ts).
    expect(rows[0].url).toBe(`${peer.url}/sms?apikey=***&region=***`);

    // Archived: the row is made old, a global policy archives it, and the CSV is downloaded as a site member would.
    await ensureLogPartitions(thisFile.platform.db, {
      logType: 'INTEGRATION_LOG',
      from: new Date('2025-01-01T00:00:00Z'),
      to: new Date('2025-01-01T00:00:00Z'),
    });
    await thisFile.platform
      .db('integration.integration_log')
      .where({ site_id: 'site-c' })
      .update({ created_at: thisFile.platform.db.raw("'2025-01-01T00:00:00Z'::timestamptz") });
    await globalRetention(thisFile.api.url, admin, 'INTEGRATION_LOG');
    const started = await call(thisFile.api.url, 'POST', '/api/settings/archive-policies/run', { token: admin, body: { logType: 'INTEGRATION_LOG' } });
    expect(started.status).toBe(202);
    const outcome = await archiveOutcome(thisFile.platform, started.body.runs[0].workflowId, started.body.runs[0].runId);
    const site = outcome.sites.find((entry) => entry.siteId === 'site-c')!;
    expect(site).toEqual(expect.objectContaining({ state: 'DONE', rowsExported: 1, rowsDeleted: 1 }));
    const member = await thisFile.platform.token({ sub: 'vic', roles: ['VIEWER'], sites: ['site-c'] });
    const csv = await (await fetch(`${thisFile.api.url}/api/assets/${site.assetId}/download`, { headers: { authorization: `Bearer ${member}` } })).text();
    expect(csv).toContain('apikey=***');
    expect(csv).not.toContain(KEY_IN_QUERY);
    expect(csv).not.toContain(PASSWORD_IN_BODY);
  } finally {
    await peer.close();
  }
});

test('a stored password goes only where it was given for: a new host, port or user name without the password again is 400 and changes nothing', async () => {
  const soap = {
    configName: 'moving-peer',
    transport: 'SOAP',
    serviceUrl: 'https://crm.example/soap',
    soapMethodName: 'Send',
    sampleRequest: '<Send/>',
    serviceUsername: 'svc',
  };
  const created = await call(thisFile.api.url, 'POST', '/api/settings/sms', { token: admin, body: { ...soap, servicePassword: PASSWORD_IN_BODY } });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  for (const [what, change] of [
    ['another host', { serviceUrl: 'https://collector.attacker.example/soap' }],
    ['another port', { serviceUrl: 'https://crm.example:8443/soap' }],
    ['another scheme', { serviceUrl: 'http://crm.example/soap' }],
    ['another user', { serviceUsername: 'someone-else' }],
  ] as Array<[string, Record<string, unknown>]>) {
    const moved = await call(thisFile.api.url, 'PUT', `/api/settings/sms/${id}`, { token: admin, body: { ...soap, ...change } });
    expect({ what, status: moved.status, code: moved.body?.code }).toEqual({ what, status: 400, code: 'VALIDATION_FAILED' });
  }
  expect((await call(thisFile.api.url, 'GET', `/api/settings/sms/${id}`, { token: admin })).body).toEqual(
    expect.objectContaining({ serviceUrl: 'https://crm.example/soap', serviceUsername: 'svc', hasServicePassword: true }),
  );
  // Another path on the same origin, or a new name, keeps it; a move with the password given again is fine.
  expect(
    (
      await call(thisFile.api.url, 'PUT', `/api/settings/sms/${id}`, {
        token: admin,
        body: { ...soap, configName: 'renamed-peer', serviceUrl: 'https://crm.example/soap/v2' },
      })
    ).status,
  ).toBe(200);
  const withPassword = await call(thisFile.api.url, 'PUT', `/api/settings/sms/${id}`, {
    token: admin,
    body: { ...soap, serviceUrl: 'https://crm2.example/soap', servicePassword: 'a-new-one' },
  });
  expect({ status: withPassword.status, has: withPassword.body.hasServicePassword }).toEqual({ status: 200, has: true });

  const smtp = { configName: 'moving-relay', transport: 'SMTP', smtpHost: 'relay.example', smtpPort: 587, smtpUsername: 'mailer' };
  const relay = await call(thisFile.api.url, 'POST', '/api/settings/email', { token: admin, body: { ...smtp, smtpPassword: PASSWORD_IN_BODY } });
  expect(relay.status).toBe(201);
  for (const change of [{ smtpHost: 'relay.attacker.example' }, { smtpPort: 2525 }, { smtpUsername: 'other' }]) {
    const moved = await call(thisFile.api.url, 'PUT', `/api/settings/email/${relay.body.id}`, { token: admin, body: { ...smtp, ...change } });
    expect({ change, status: moved.status }).toEqual({ change, status: 400 });
  }
  expect(
    (await call(thisFile.api.url, 'PUT', `/api/settings/email/${relay.body.id}`, { token: admin, body: { ...smtp, configName: 'renamed-relay' } })).status,
  ).toBe(200);
});
