import { platformWithApi } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { startPeer } from '../messaging/harness';

/** The SOAP tracker against a SOAP peer the test runs (a real HTTP server). */
const thisFile = platformWithApi();
let editor: string;

beforeAll(async () => {
  await thisFile.platform.startWorker(['approvals']);
  editor = await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-t'] });
});

const envelope = (inner: string) =>
  `<?xml version="1.0"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>${inner}</soap:Body></soap:Envelope>`;
const TEMPLATE = envelope('<GetQuote xmlns="urn:quotes"><symbol>{{symbol}}</symbol><note>{{note}}</note></GetQuote>');

async function component(serviceUrl: string, publish: boolean): Promise<string> {
  const created = await call(thisFile.api.url, 'POST', '/api/integration/soap-components', {
    token: editor,
    body: { siteId: 'site-t', name: `quotes-${publish}`, serviceUrl, soapMethodName: 'urn:quotes#GetQuote', sampleRequest: TEMPLATE },
  });
  expect(created.status).toBe(201);
  if (publish)
    expect((await call(thisFile.api.url, 'POST', `/api/integration/soap-components/${created.body.id}/publish`, { token: editor })).status).toBe(200);
  return created.body.id;
}

const invoke = (id: string, variables: Record<string, unknown>, token = editor) =>
  call(thisFile.api.url, 'POST', `/api/integration/soap-components/${id}/invoke`, { token, body: { variables } });

test('invoke calls the published revision: the peer gets the envelope with the SOAPAction; the answer is the parsed Body; a hostile variable stays text; the log row carries the site', async () => {
  const peer = await startPeer(() => ({
    status: 200,
    headers: { 'content-type': 'text/xml' },
    body: envelope('<GetQuoteResponse><price>42.5</price></GetQuoteResponse>'),
  }));
  try {
    const id = await component(`${peer.url}/soap`, true);
    const answer = await invoke(id, { symbol: 'ACME', note: '</note><symbol>EVIL</symbol><note>' });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ statusCode: 200, body: { GetQuoteResponse: { price: 42.5 } }, durationMs: expect.any(Number) });
    const [request] = peer.received;
    expect(request.headers.soapaction).toBe('urn:quotes#GetQuote');
    expect(request.body).toContain('<symbol>ACME</symbol><note>&lt;/note&gt;&lt;symbol&gt;EVIL&lt;/symbol&gt;&lt;note&gt;</note>');
    expect(request.body.match(/<symbol>/g)).toHaveLength(1);
    const [row] = await thisFile.platform.db('integration.integration_log').where({ url: `${peer.url}/soap` });
    expect(row).toEqual(expect.objectContaining({ site_id: 'site-t', outcome: 'SUCCESS', component: 'soap:quotes-true', operation: 'urn:quotes#GetQuote' }));
  } finally {
    await peer.close();
  }
});

test('a SOAP Fault answers 502 PEER_FAULT with its code and string, and is logged FAILED with the site', async () => {
  const peer = await startPeer(() => ({
    status: 500,
    body: envelope('<soap:Fault><faultcode>soap:Client</faultcode><faultstring>Unknown symbol</faultstring></soap:Fault>'),
  }));
  try {
    const id = await component(`${peer.url}/fault`, true);
    const answer = await invoke(id, { symbol: 'NOPE', note: '' });
    expectProblem(answer, 502, 'PEER_FAULT');
    expect(answer.body.fault).toEqual({ code: 'soap:Client', string: 'Unknown symbol' });
    const [row] = await thisFile.platform.db('integration.integration_log').where({ url: `${peer.url}/fault` });
    expect(row).toEqual(expect.objectContaining({ site_id: 'site-t', outcome: 'FAILED' }));
  } finally {
    await peer.close();
  }
});

test("a draft-only component -> 409 COMPONENT_NOT_PUBLISHED; another site's editor -> 403; nothing is called", async () => {
  const peer = await startPeer(() => ({ status: 200, body: envelope('<ok/>') }));
  try {
    const id = await component(`${peer.url}/draft`, false);
    expectProblem(await invoke(id, { symbol: 'X', note: '' }), 409, 'COMPONENT_NOT_PUBLISHED');
    const outsider = await thisFile.platform.token({ sub: 'oz', roles: ['EDITOR'], sites: ['site-other'] });
    expectProblem(await invoke(id, { symbol: 'X', note: '' }, outsider), 403, 'FORBIDDEN');
    expect(peer.received).toEqual([]);
  } finally {
    await peer.close();
  }
});

test('a service URL that is not a URL is 400 VALIDATION_FAILED on save and on update, never a 502 at invoke time', async () => {
  const body = { siteId: 'site-t', soapMethodName: 'urn:quotes#GetQuote', sampleRequest: TEMPLATE };
  for (const [n, serviceUrl] of [
    'http://quotes.example:99999/soap',
    'http://1.2.3.999/soap',
    'https://',
    'http://bad host/soap',
    'http://[::1/soap',
  ].entries()) {
    const refused = await call(thisFile.api.url, 'POST', '/api/integration/soap-components', {
      token: editor,
      body: { ...body, name: `bad-url-${n}`, serviceUrl },
    });
    expect({ serviceUrl, status: refused.status, code: refused.body?.code }).toEqual({ serviceUrl, status: 400, code: 'VALIDATION_FAILED' });
  }
  const created = await call(thisFile.api.url, 'POST', '/api/integration/soap-components', {
    token: editor,
    body: { ...body, name: 'good-url', serviceUrl: 'http://quotes.example:8443/soap' },
  });
  expect(created.status).toBe(201);
  const updated = await call(thisFile.api.url, 'PUT', `/api/integration/soap-components/${created.body.id}`, {
    token: editor,
    body: { ...body, name: 'good-url', serviceUrl: 'http://quotes.example:70000/soap' },
  });
  expect({ status: updated.status, code: updated.body?.code }).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
  expect((await call(thisFile.api.url, 'GET', `/api/integration/soap-components/${created.body.id}`, { token: editor })).body.serviceUrl).toBe(
    'http://quotes.example:8443/soap',
  );
});
