import { attachPlatform, RunningApi, TestPlatform } from '../support/platform';
import { call } from '../support/http';
import { archiveOutcome } from '../archival/harness';
import { startPeer } from './harness';

/**
 * A peer's credentials (an API key in its URL's query, the stored password substituted into its body) reach
 * the peer, and nowhere else: not the integration log, not the archive CSV every site member can download.
 */
let platform: TestPlatform;
let api: RunningApi;
let admin: string;

const KEY_IN_QUERY = 'SECRET-query-key-7f3a';
const PASSWORD_IN_BODY = 'SECRET-body-password-91c2';

beforeAll(async () => {
  platform = await attachPlatform();
  api = await platform.startApi();
  await platform.startWorker(['messaging', 'archival'], { API_INTERNAL_URL: api.url });
  admin = await platform.token({ sub: 'ada', roles: ['ADMIN'] });
});

afterAll(async () => {
  await platform?.close();
});

test('a REST peer with ?apikey= in its URL and the password token in its body: the peer gets both; integration_log and the INTEGRATION_LOG archive CSV keep neither', async () => {
  const peer = await startPeer(() => ({ status: 200, body: '{"accepted":true}' }));
  try {
    const created = await call(api.url, 'POST', '/api/settings/sms', {
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
    const sent = await call(api.url, 'POST', '/api/settings/communication/process', { token: admin, body: { channel: 'SMS', siteId: 'site-c', to: '+15550002222', content: 'hello' } });
    expect(sent.body).toEqual({ status: 'SUCCESS', detail: 'sent' });
    // The peer got what it needs.
    expect(peer.received[0].url).toBe(`/sms?apikey=${KEY_IN_QUERY}&region=eu`);
    expect(JSON.parse(peer.received[0].body)).toEqual({ to: '+15550002222', text: 'hello', auth: { password: PASSWORD_IN_BODY } });

    const rows = await platform.db('integration.integration_log').where({ site_id: 'site-c' });
    expect(rows).toHaveLength(1);
    const logged = JSON.stringify(rows);
    expect(logged).not.toContain(KEY_IN_QUERY);
    expect(logged).not.toContain(PASSWORD_IN_BODY);
    expect(rows[0].url).toBe(`${peer.url}/sms?apikey=***&region=eu`);

    // Archived: the row is made old, a global policy archives it, and the CSV is downloaded as a site member would.
    await platform.db('integration.integration_log').where({ site_id: 'site-c' }).update({ created_at: platform.db.raw("'2025-01-01T00:00:00Z'::timestamptz") });
    expect((await call(api.url, 'POST', '/api/settings/archive-policies', { token: admin, body: { logType: 'INTEGRATION_LOG', siteId: null, retentionDays: 30, enabled: true } })).status).toBe(201);
    const started = await call(api.url, 'POST', '/api/settings/archive-policies/run', { token: admin, body: { logType: 'INTEGRATION_LOG' } });
    expect(started.status).toBe(202);
    const outcome = await archiveOutcome(platform, started.body.runs[0].workflowId, started.body.runs[0].runId);
    const site = outcome.sites.find((entry) => entry.siteId === 'site-c')!;
    expect(site).toEqual(expect.objectContaining({ state: 'DONE', rowsExported: 1, rowsDeleted: 1 }));
    const member = await platform.token({ sub: 'vic', roles: ['VIEWER'], sites: ['site-c'] });
    const csv = await (await fetch(`${api.url}/api/assets/${site.assetId}/download`, { headers: { authorization: `Bearer ${member}` } })).text();
    expect(csv).toContain('apikey=***');
    expect(csv).not.toContain(KEY_IN_QUERY);
    expect(csv).not.toContain(PASSWORD_IN_BODY);
  } finally {
    await peer.close();
  }
});
