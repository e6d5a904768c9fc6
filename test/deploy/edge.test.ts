import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { SignJWT } from 'jose';
import { writeEdgeConfig } from '../../edge/files';
import { EdgePlan, EdgeService } from '../../edge/xds';
import { RunningEdge, startEdge } from '../../scripts/platform/edge';
import { freePort } from '../support/slots';
import { waitUntil } from '../support/wait';

/**
 * The edge on its own: a real Envoy on the files the control plane writes, in front of real HTTP peers
 * standing in for a service's instances and for the Koa API.
 */
const SECRET = 'edge-test-secret-of-enough-length';

interface Received {
  instance: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

const received: Received[] = [];
const healthy = new Map<string, boolean>();

async function peer(name: string): Promise<{ port: number; close(): Promise<void> }> {
  healthy.set(name, true);
  const server = http.createServer((request, response) => {
    if (request.url === '/health') {
      response.writeHead(healthy.get(name) ? 200 : 503).end();
      return;
    }
    if (request.url === '/stream') {
      // Ten chunks, one a second: an answer that streams for 10 s.
      response.writeHead(200, { 'content-type': 'text/plain' });
      let sent = 0;
      const timer = setInterval(() => {
        response.write(`chunk ${++sent}\n`);
        if (sent === 10) {
          clearInterval(timer);
          response.end();
        }
      }, 1000);
      return;
    }
    received.push({ instance: name, url: request.url ?? '', headers: request.headers });
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ instance: name, url: request.url }));
  });
  // A WebSocket handshake answered by the book, then every byte echoed back: enough to show the upgrade passes.
  server.on('upgrade', (request, socket) => {
    const accept = crypto.createHash('sha1').update(`${request.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

let dir: string;
let edge: RunningEdge;
let plan: EdgePlan;
let base: string;
const peers: Record<string, { port: number; close(): Promise<void> }> = {};

const service = (instances: string[]): EdgeService => ({
  name: 'hello-service',
  slug: 'hello',
  healthPath: '/health',
  instances: instances.map((name) => ({ host: '127.0.0.1', port: peers[name].port })),
});

const sign = (claims: Record<string, unknown>, options: { secret?: string; expiresIn?: string | null } = {}) => {
  let jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt();
  if (options.expiresIn !== null) jwt = jwt.setExpirationTime(options.expiresIn ?? '5m');
  return jwt.sign(new TextEncoder().encode(options.secret ?? SECRET));
};

beforeAll(async () => {
  for (const name of ['one', 'two', 'three', 'api']) peers[name] = await peer(name);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-edge-'));
  plan = {
    dir,
    listen: { host: '127.0.0.1', port: await freePort() },
    api: { host: '127.0.0.1', port: peers.api.port },
    reservedSlugs: ['settings', 'infra'],
    services: [service(['one', 'two'])],
    jwt: { hs256Secret: SECRET },
    connectTimeoutMs: 1000,
    idleTimeoutMs: 60000,
  };
  base = `http://127.0.0.1:${plan.listen.port}`;
  writeEdgeConfig(plan);
  edge = await startEdge({ dir, adminPort: await freePort() });
  await waitUntil(
    'both instances healthy at the edge',
    async () => {
      const seen = new Set<string>();
      const token = await sign({ sub: 'u' });
      for (let i = 0; i < 6; i++) {
        const answer = await fetch(`${base}/api/hello/ping`, { headers: { authorization: `Bearer ${token}` } });
        if (answer.status === 200) seen.add(((await answer.json()) as { instance: string }).instance);
      }
      return seen.size === 2 ? true : null;
    },
    20000,
  );
});

afterAll(async () => {
  await edge?.stop();
  for (const running of Object.values(peers)) await running.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test("a verified token becomes X-User-* headers; a client's own X-User-* (any spelling) and the token itself never reach the service", async () => {
  received.length = 0;
  const token = await sign({ sub: 'ada', name: 'Ada\r\nX-Evil: 1', email: 'ada@example.test', roles: ['ADMIN', 'EDITOR'], sites: ['site-1', 'site,2'] });
  const answer = await fetch(`${base}/api/hello/orders/7?x=1`, {
    headers: { authorization: `Bearer ${token}`, 'x-user-id': 'mallory', 'X-User-Roles': 'ADMIN', x_user_sites: 'everywhere', 'X-User-Anything': 'forged' },
  });
  expect(answer.status).toBe(200);
  expect(received).toHaveLength(1);
  const [request] = received;
  expect(request.url).toBe('/orders/7?x=1');
  expect(request.headers).toEqual(
    expect.objectContaining({
      'x-user-id': 'ada',
      'x-user-name': 'Ada  X-Evil: 1',
      'x-user-email': 'ada@example.test',
      'x-user-roles': 'ADMIN,EDITOR',
      'x-user-sites': 'site-1,site 2',
    }),
  );
  expect(request.headers.authorization).toBeUndefined();
  expect(request.headers['x_user_sites']).toBeUndefined();
  expect(request.headers['x-user-anything']).toBeUndefined();
  expect(request.headers['x-evil']).toBeUndefined();
  expect(request.headers['x-request-id']).toEqual(expect.any(String));
});

test('#60: odd claims keep the documented format: list items lose line breaks, tabs and commas; a claim that cannot be made clean is set empty', async () => {
  const identityOf = async (claims: Record<string, unknown>) => {
    received.length = 0;
    const token = await sign({ sub: 'ada', ...claims });
    // The client's own X-User-* never survives, even where the token gives no value.
    const forged = { 'x-user-roles': 'ADMIN', 'x-user-sites': 'everywhere', 'x-user-name': 'Mallory', 'x-user-email': 'm@evil.test' };
    const answer = await fetch(`${base}/api/hello/whoami`, { headers: { authorization: `Bearer ${token}`, ...forged } });
    expect(answer.status).toBe(200);
    const { headers } = received[0];
    return Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith('x-user-')));
  };
  const none = { 'x-user-id': 'ada', 'x-user-name': '', 'x-user-email': '', 'x-user-roles': '', 'x-user-sites': '', 'x-user-site-id': '' };
  expect(await identityOf({ roles: ['ADMIN', 'ED,ITOR', 'A\r\nB', 'tab\there'], sites: ['site-1'], name: 'Lovelace, Ada' })).toEqual({
    ...none,
    'x-user-name': 'Lovelace  Ada',
    'x-user-roles': 'ADMIN,ED ITOR,A  B,tab here',
    'x-user-sites': 'site-1',
  });
  // Not lists of strings, a NUL that would read as a separator, a control character that cannot be made clean.
  expect(await identityOf({ roles: ['ADMIN', 5], sites: 'site-1', name: 7 })).toEqual(none);
  expect(await identityOf({ roles: ['EDITOR\u0000ADMIN'], sites: ['site\u0001'], name: 'Ada\u001b[31m' })).toEqual(none);
  // An item's own spaces are kept; the ends of the whole value are trimmed by the service's HTTP parser.
  expect(await identityOf({ roles: [' ADMIN', 'EDITOR '], sites: ['site-1 ', ' site-2'] })).toEqual({
    ...none,
    'x-user-roles': 'ADMIN,EDITOR',
    'x-user-sites': 'site-1 , site-2',
  });
  expect(await identityOf({ roles: [], sites: [''], email: 'ada@example.test', site: 'site-1' })).toEqual({
    ...none,
    'x-user-email': 'ada@example.test',
    'x-user-site-id': 'site-1',
  });
});

test('alg none, a wrong key, an expired token, a token without exp and no token each get 401 problem+json at the edge; the service receives nothing', async () => {
  received.length = 0;
  const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify({ sub: 'x', exp: Math.floor(Date.now() / 1000) + 300 })).toString('base64url')}.`;
  const tokens = [
    none,
    await sign({ sub: 'x' }, { secret: 'another-secret-of-enough-length!' }),
    await sign({ sub: 'x' }, { expiresIn: '-5m' }),
    await sign({ sub: 'x' }, { expiresIn: null }),
  ];
  for (const token of [...tokens, null]) {
    const answer = await fetch(`${base}/api/hello/x`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
    expect(answer.status).toBe(401);
    expect(answer.headers.get('content-type')).toBe('application/problem+json');
    expect(await answer.json()).toEqual(expect.objectContaining({ status: 401, code: 'UNAUTHENTICATED' }));
  }
  expect(received).toEqual([]);
});

test("the platform's reserved slugs and paths outside /api/ go to the API as they came; an unknown slug is 404 problem+json", async () => {
  received.length = 0;
  const settings = await fetch(`${base}/api/settings/archive-policies?x=1`, { headers: { authorization: 'Bearer not-checked-here' } });
  expect(await settings.json()).toEqual({ instance: 'api', url: '/api/settings/archive-policies?x=1' });
  expect(received[0].headers.authorization).toBe('Bearer not-checked-here');
  expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ instance: 'api', url: '/readyz' });
  // Not slug-shaped: the API's own (its OpenAPI document).
  expect(await (await fetch(`${base}/api/openapi.json`)).json()).toEqual({ instance: 'api', url: '/api/openapi.json' });
  const unknown = await fetch(`${base}/api/nobody/x`);
  expect(unknown.status).toBe(404);
  expect(unknown.headers.get('content-type')).toBe('application/problem+json');
  expect(await unknown.json()).toEqual(expect.objectContaining({ code: 'NOT_FOUND', status: 404 }));
});

test('a new instance in the registry is in the round-robin within 2 s, without restarting Envoy; one failing its health check is taken out; none healthy is 503 problem+json', async () => {
  const token = await sign({ sub: 'u' });
  const spread = async (requests: number) => {
    const seen: Record<string, number> = {};
    for (let i = 0; i < requests; i++) {
      const answer = await fetch(`${base}/api/hello/who`, { headers: { authorization: `Bearer ${token}` } });
      if (answer.status !== 200) return { status: answer.status, body: await answer.json(), seen };
      const { instance } = (await answer.json()) as { instance: string };
      seen[instance] = (seen[instance] ?? 0) + 1;
    }
    return { status: 200, seen };
  };
  plan = { ...plan, services: [service(['one', 'two', 'three'])] };
  const changed = Date.now();
  writeEdgeConfig(plan);
  await waitUntil('three instances in rotation', async () => (Object.keys((await spread(6)).seen).length === 3 ? true : null), 10000);
  expect(Date.now() - changed).toBeLessThanOrEqual(2000);

  healthy.set('two', false);
  await waitUntil(
    'the unhealthy instance out of rotation',
    async () => {
      const { seen } = await spread(6);
      return !seen.two && Object.keys(seen).length === 2 ? true : null;
    },
    10000,
  );

  for (const name of ['one', 'three']) healthy.set(name, false);
  const down = await waitUntil(
    '503 with no healthy instance',
    async () => {
      const outcome = await spread(1);
      return outcome.status === 503 ? outcome : null;
    },
    10000,
  );
  expect(down.body).toEqual(expect.objectContaining({ status: 503, code: 'SERVICE_UNAVAILABLE' }));
  for (const name of ['one', 'two', 'three']) healthy.set(name, true);
  await waitUntil('the instances back in rotation', async () => ((await spread(1)).status === 200 ? true : null), 10000);
});

test('a registered service with no instance yet answers 503 problem+json; its first instance is routable at once', async () => {
  const token = await sign({ sub: 'u' });
  writeEdgeConfig({ ...plan, services: [...plan.services, { name: 'late-service', slug: 'late', healthPath: '/health', instances: [] }] });
  const empty = await waitUntil(
    'the new route',
    async () => {
      const answer = await fetch(`${base}/api/late/x`, { headers: { authorization: `Bearer ${token}` } });
      return answer.status === 404 ? null : answer;
    },
    5000,
  );
  expect(empty.status).toBe(503);
  expect(empty.headers.get('content-type')).toBe('application/problem+json');
  expect(await empty.json()).toEqual(expect.objectContaining({ code: 'SERVICE_UNAVAILABLE', detail: 'late-service has no healthy instance.' }));

  writeEdgeConfig({
    ...plan,
    services: [...plan.services, { name: 'late-service', slug: 'late', healthPath: '/health', instances: [{ host: '127.0.0.1', port: peers.one.port }] }],
  });
  const refusals = new Set<string>();
  await waitUntil(
    'the first instance routable',
    async () => {
      const answer = await fetch(`${base}/api/late/x`, { headers: { authorization: `Bearer ${token}` } });
      if (answer.status === 200) return true;
      refusals.add(`${answer.status} ${answer.headers.get('content-type')} ${((await answer.json()) as { detail: string }).detail}`);
      return null;
    },
    5000,
  );
  // Only the switch itself is seen (the route's own answer, or its cluster not checked yet, for a moment),
  // never "no healthy upstream" while the instance waits a second for its first health check.
  const switching = [
    '503 application/problem+json late-service has no healthy instance.',
    '503 application/problem+json The service is being connected at the edge; try again in a moment.',
  ];
  expect([...refusals].filter((refusal) => !switching.includes(refusal))).toEqual([]);
  writeEdgeConfig(plan);
});

test('a well-formed request id from the client is kept, given to the service and answered; a malformed one is replaced', async () => {
  received.length = 0;
  const token = await sign({ sub: 'u' });
  const kept = await fetch(`${base}/api/hello/traced`, { headers: { authorization: `Bearer ${token}`, 'x-request-id': 'trace-123' } });
  expect(kept.headers.get('x-request-id')).toBe('trace-123');
  expect(received[0].headers['x-request-id']).toBe('trace-123');
  const replaced = await fetch(`${base}/api/hello/traced`, { headers: { authorization: `Bearer ${token}`, 'x-request-id': 'bad id; drop' } });
  expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(received[1].headers['x-request-id']).toBe(replaced.headers.get('x-request-id'));
});

test('#60: the request id check cannot be steered: its scratch header from a client is ignored; 128 characters are kept, 129 are not; a UUID is kept as sent', async () => {
  received.length = 0;
  const token = await sign({ sub: 'u' });
  const send = (headers: Record<string, string>) => fetch(`${base}/api/hello/traced`, { headers: { authorization: `Bearer ${token}`, ...headers } });
  const steered = await send({ 'x-request-id': 'bad id', 'x-opsflow-kept-request-id': 'chosen-by-client' });
  expect(steered.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(received[0].headers['x-request-id']).toBe(steered.headers.get('x-request-id'));
  expect(received[0].headers['x-opsflow-kept-request-id']).toBeUndefined();
  const longest = 'a'.repeat(128);
  expect((await send({ 'x-request-id': longest })).headers.get('x-request-id')).toBe(longest);
  expect((await send({ 'x-request-id': `${longest}b` })).headers.get('x-request-id')).not.toBe(`${longest}b`);
  const uuid = crypto.randomUUID();
  expect((await send({ 'x-request-id': uuid })).headers.get('x-request-id')).toBe(uuid);
  expect(received[3].headers['x-request-id']).toBe(uuid);
});

test("the edge's files, which carry the token-verification key, are readable by their owner alone", async () => {
  expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
  const files = fs.readdirSync(dir);
  expect(files).toEqual(expect.arrayContaining(['bootstrap.json', 'lds.json', 'cds.json', 'rds.json']));
  for (const file of files) expect({ file, mode: (fs.statSync(path.join(dir, file)).mode & 0o777).toString(8) }).toEqual({ file, mode: '600' });
});

test("Envoy's access log is JSON, one line per request, with the request id the service saw", async () => {
  received.length = 0;
  const token = await sign({ sub: 'u' });
  await fetch(`${base}/api/hello/logged`, { headers: { authorization: `Bearer ${token}` } });
  const requestId = received[0].headers['x-request-id'];
  const line = await waitUntil(
    'the access log line',
    async () => {
      const lines = edge
        .output()
        .split('\n')
        .filter((text) => text.startsWith('{'))
        .map((text) => JSON.parse(text) as Record<string, unknown>);
      return lines.find((entry) => entry.requestId === requestId) ?? null;
    },
    5000,
  );
  expect(line).toEqual(
    expect.objectContaining({ component: 'edge', method: 'GET', path: '/api/hello/logged', status: 200, upstream: expect.stringMatching(/^127\.0\.0\.1:/) }),
  );
});

test("#58, finding 3: Envoy's access log leaves an unsubscribe link's token out, and keeps the path of every other request", async () => {
  const token = `s1.${crypto.randomBytes(60).toString('base64url')}`;
  const userToken = await sign({ sub: 'u' });
  // Two spellings of the link, and a deployed service's own /u/ path, reached through its slug.
  const requests = [
    { path: `/u/${token}`, logged: '/u/[redacted]' },
    { path: `/U/${token}`, logged: '/u/[redacted]' },
    { path: '/api/hello/u/its.own', logged: '/api/hello/u/its.own' },
  ].map((request) => ({ ...request, requestId: `unsubscribe-${crypto.randomUUID()}` }));
  for (const request of requests) {
    const headers = { 'x-request-id': request.requestId, authorization: `Bearer ${userToken}` };
    await fetch(`${base}${request.path}`, { method: 'POST', headers, body: 'List-Unsubscribe=One-Click' });
  }
  const linesOf = () =>
    edge
      .output()
      .split('\n')
      .filter((text) => text.startsWith('{'))
      .map((text) => JSON.parse(text) as Record<string, unknown>);
  await waitUntil(
    'the three access log lines',
    async () => (requests.every((request) => linesOf().some((line) => line.requestId === request.requestId)) ? true : null),
    5000,
  );
  // One line per request (never one from each logger), with the path as it should be written.
  for (const request of requests)
    expect(
      linesOf()
        .filter((line) => line.requestId === request.requestId)
        .map((line) => line.path),
    ).toEqual([request.logged]);
  expect(edge.output()).not.toContain(token.slice(3));
});

test("where a request came from is the edge's to say: a client's Forwarded, X-Forwarded-For and X-Real-IP are replaced; headers named in Connection go", async () => {
  received.length = 0;
  const token = await sign({ sub: 'u' });
  // node:http, as fetch refuses to send a Connection header of its own.
  const status = await new Promise<number | undefined>((resolve, reject) => {
    http
      .get(
        `${base}/api/hello/where`,
        {
          headers: {
            authorization: `Bearer ${token}`,
            forwarded: 'for=10.9.9.9',
            'x-forwarded-for': '10.9.9.9',
            'x-real-ip': '10.9.9.9',
            connection: 'keep-alive, x-hop-secret',
            'x-hop-secret': 'for the next hop only',
          },
          agent: false,
        },
        (answer) => {
          answer.resume();
          answer.on('end', () => resolve(answer.statusCode));
        },
      )
      .on('error', reject);
  });
  expect(status).toBe(200);
  const [request] = received;
  expect(request.headers['x-forwarded-for']).toBe('127.0.0.1');
  expect(request.headers['x-real-ip']).toBe('127.0.0.1');
  expect(request.headers.forwarded).toBe(`for=127.0.0.1;proto=http;host="127.0.0.1:${plan.listen.port}"`);
  expect(request.headers).toEqual(
    expect.objectContaining({ 'x-forwarded-proto': 'http', 'x-forwarded-host': `127.0.0.1:${plan.listen.port}`, 'x-forwarded-prefix': '/api/hello' }),
  );
  expect(request.headers['x-hop-secret']).toBeUndefined();
});

test('a WebSocket upgrade passes through the edge, and bytes go both ways', async () => {
  const token = await sign({ sub: 'u' });
  const socket = net.connect(plan.listen.port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(
    `GET /api/hello/socket HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  let seen = '';
  socket.on('data', (chunk) => (seen += chunk.toString('latin1')));
  await waitUntil('the 101 answer', async () => (seen.includes('\r\n\r\n') ? true : null), 5000);
  expect(seen.startsWith('HTTP/1.1 101')).toBe(true);
  seen = '';
  socket.write('echo me');
  await waitUntil('the echo', async () => (seen === 'echo me' ? true : null), 5000);
  socket.destroy();
});

test('an answer that streams for 10 s is not cut: there is no total timeout', async () => {
  const token = await sign({ sub: 'u' });
  const answer = await fetch(`${base}/api/hello/stream`, { headers: { authorization: `Bearer ${token}` } });
  expect(answer.status).toBe(200);
  const text = await answer.text();
  expect(text.trim().split('\n')).toEqual(Array.from({ length: 10 }, (_, i) => `chunk ${i + 1}`));
}, 30000);

/** A GET with the Host header a browser would send for `hostname` (node:http: fetch keeps its own Host). */
const getAs = (hostname: string, urlPath: string, token?: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const headers = { host: `${hostname}:${plan.listen.port}`, ...(token ? { authorization: `Bearer ${token}` } : {}) };
    http
      .get({ host: '127.0.0.1', port: plan.listen.port, path: urlPath, headers }, (response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });

test("#64: a service's hostname takes every path to it, as sent, beside its slug's path, under the same token rule; the platform's own hostname stays the API's", async () => {
  const token = await sign({ sub: 'u' });
  writeEdgeConfig({
    ...plan,
    platformHostnames: ['ops.example.test'],
    // The instances as they are (three since an earlier test): a change of them here would reach Envoy apart
    // from the routes, and a request between the two could go to an instance just dropped.
    services: [{ ...plan.services[0], domains: ['shop.example.test', 'ops.example.test'] }],
  });
  await waitUntil(
    'the hostname routed',
    async () => {
      const answer = await getAs('Shop.Example.test', '/cart/7?x=1', token);
      return answer.status === 200 && /"instance":"(one|two|three)"/.test(answer.body) ? true : null;
    },
    5000,
  );
  // Asked again once routed: the tries before the new routes were read reached the API.
  received.length = 0;
  const answered = await getAs('Shop.Example.test', '/cart/7?x=1', token);
  expect(JSON.parse(answered.body)).toEqual({ instance: expect.stringMatching(/^(one|two|three)$/), url: '/cart/7?x=1' });
  expect(received).toHaveLength(1);
  const [request] = received;
  expect(request.headers['x-forwarded-prefix']).toBeUndefined();
  expect(request.headers['x-user-id']).toBe('u');
  // As on its path: no token, no answer from the service.
  expect((await getAs('shop.example.test', '/cart/7')).status).toBe(401);
  // The platform's own name goes to the API even where the registry gives it to a service; so does any other name.
  for (const hostname of ['ops.example.test', 'other.example.test'])
    expect(JSON.parse((await getAs(hostname, '/cart/7')).body)).toEqual({ instance: 'api', url: '/cart/7' });
  // The slug's path still works.
  expect((await fetch(`${base}/api/hello/ping`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  writeEdgeConfig(plan);
});

/** The inotify instances a process holds: Envoy makes one for each file it watches, and Linux allows 128 a user by default. */
const inotifyInstances = (pid: number) =>
  fs.readdirSync(`/proc/${pid}/fd`).filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === 'anon_inode:inotify';
    } catch {
      return false; // closed while read
    }
  }).length;

test('#63: 150 services are routable, and Envoy watches no more files for them than for one', async () => {
  const token = await sign({ sub: 'u' });
  const before = inotifyInstances(edge.pid);
  const many: EdgeService[] = Array.from({ length: 150 }, (_, i) => ({
    name: `many-${i}-service`,
    slug: `many-${i}`,
    healthPath: '/health',
    instances: [{ host: '127.0.0.1', port: peers.three.port }],
  }));
  writeEdgeConfig({ ...plan, services: [...plan.services, ...many] });
  for (const slug of ['many-0', 'many-149'])
    await waitUntil(
      `${slug} routable`,
      async () => ((await fetch(`${base}/api/${slug}/x`, { headers: { authorization: `Bearer ${token}` } })).status === 200 ? true : null),
      20000,
    );
  expect(inotifyInstances(edge.pid)).toBe(before);
  writeEdgeConfig(plan);
});

test('#63: 150 hostnames with certificates are served over HTTPS, and Envoy watches no more files for them than for one', async () => {
  const keys = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-edge-keys-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-subj',
      '/CN=many.example',
      '-days',
      '2',
      '-keyout',
      'key.pem',
      '-out',
      'chain.pem',
    ],
    {
      cwd: keys,
      stdio: 'pipe',
    },
  );
  const [chainPem, keyPem] = ['chain.pem', 'key.pem'].map((file) => fs.readFileSync(path.join(keys, file), 'utf8'));
  fs.rmSync(keys, { recursive: true, force: true });
  const certificates = Array.from({ length: 150 }, (_, i) => ({ hostname: `many-${i}.example`, chainPem, keyPem, serial: String(i) }));
  const tlsPort = await freePort();
  const serving = (count: number) =>
    writeEdgeConfig({ ...plan, tls: { listen: { host: '127.0.0.1', port: tlsPort }, certificates: certificates.slice(0, count) } });
  const handshakes = (servername: string) =>
    new Promise<boolean>((resolve) => {
      const socket = tls.connect({ host: '127.0.0.1', port: tlsPort, servername, rejectUnauthorized: false }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
  // The HTTPS listener's routes are one more file, however many names it serves.
  serving(1);
  await waitUntil('the first hostname served', async () => ((await handshakes('many-0.example')) ? true : null), 20000);
  const before = inotifyInstances(edge.pid);
  serving(150);
  await waitUntil('the last hostname served', async () => ((await handshakes('many-149.example')) ? true : null), 20000);
  expect(inotifyInstances(edge.pid)).toBe(before);
  writeEdgeConfig(plan);
});
