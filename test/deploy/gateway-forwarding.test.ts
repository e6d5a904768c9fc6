import crypto from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { AddressInfo } from 'node:net';
import { INSTANCE_TABLE, SERVICE_TABLE } from '../../data/deploy/registry';
import { edgeHostsOf } from '../../edge/admin';
import { DEFAULT_HEALTH_PATH } from '../../domain/deploy';
import { untilEdgeRoutes } from '../../activities/deploy/edge-routing';
import { attachPlatform, RunningApi, TestPlatform } from '../support/platform';
import { call, expectProblem } from '../support/http';
import { waitUntil } from '../support/wait';

/**
 * How the gateway (the platform's edge, a real Envoy configured by the API from the registry) forwards,
 * against real HTTP servers on this machine that the registry lists as a service's healthy instances (no
 * container needed to see the forwarding itself): failures before an answer, clients that leave, and
 * large answers. Each server answers the edge's health check on its own connection.
 */

let platform: TestPlatform;
let api: RunningApi;
let viewer: string;
const servers: net.Server[] = [];
const sockets = new Set<net.Socket>();

beforeAll(async () => {
  platform = await attachPlatform();
  api = await platform.startApi();
  viewer = await platform.token({ sub: 'vic', roles: ['VIEWER'] });
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  await platform?.close();
});

/** Answers the edge's health check (on a connection of its own) before the test's handler sees anything. */
function withHealth(handler: http.RequestListener): http.RequestListener {
  return (request, response) => {
    if (request.url === DEFAULT_HEALTH_PATH) return void response.writeHead(200, { connection: 'close' }).end('{"status":"UP"}');
    handler(request, response);
  };
}

async function listening<T extends net.Server>(server: T): Promise<T> {
  servers.push(server);
  server.on('connection', (socket: net.Socket) => sockets.add(socket.once('close', () => sockets.delete(socket))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const addressOf = (server: net.Server) => `127.0.0.1:${(server.address() as AddressInfo).port}`;

/** Puts a dynamic service in the registry whose healthy instances are the given servers. */
async function insertService(name: string, instances: net.Server[]): Promise<void> {
  const [service] = await platform
    .db(SERVICE_TABLE)
    .insert({ name, slug: name, kind: 'IMAGE', dynamic: true, status: 'RUNNING', desired_instances: instances.length })
    .returning('id');
  await platform.db(INSTANCE_TABLE).insert(
    instances.map((server) => ({
      id: crypto.randomUUID(),
      service_id: service.id,
      deployment_id: crypto.randomUUID(),
      container_id: `test-${name}`,
      address: addressOf(server),
      state: 'HEALTHY',
    })),
  );
}

/** Registers a dynamic service whose healthy instances are the given servers; answers its slug once the edge routes to them all. */
async function registerService(name: string, instances: net.Server[]): Promise<string> {
  await insertService(name, instances);
  await waitUntil(`the edge to route to ${name}`, async () => {
    const hosts = await edgeHostsOf(platform.config.edge.adminUrl!, name);
    return hosts !== null && instances.every((server) => hosts.get(addressOf(server)) === 'ROUTED');
  });
  return name;
}

test('a kept-alive socket that the instance drops under the next request: that request is sent again on a new connection and answered', async () => {
  // Answers the first request of each connection and keeps it open; drops the connection when a second
  // request arrives on it, as a server does when its idle timeout fires just as the request comes.
  const requestsPerConnection: number[] = [];
  const instance = await listening(
    net.createServer((socket) => {
      let index = -1;
      socket.on('data', (data) => {
        if (!data.includes('\r\n\r\n')) return;
        if (data.toString('latin1').startsWith(`GET ${DEFAULT_HEALTH_PATH} `)) {
          socket.end('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
          return;
        }
        if (index === -1) index = requestsPerConnection.push(0) - 1;
        requestsPerConnection[index] += 1;
        if (requestsPerConnection[index] > 1) return socket.destroy();
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
      });
    }),
  );
  const slug = await registerService('dropper', [instance]);
  for (let i = 0; i < 3; i++) {
    const answer = await call(api.url, 'GET', `/api/${slug}/x`, { token: viewer });
    expect({ status: answer.status, text: answer.text }).toEqual({ status: 200, text: 'ok' });
  }
  // Each request after the first met a kept-alive socket, was dropped there, and was answered on a new
  // connection: three answers, each connection answering exactly one.
  expect(requestsPerConnection.filter((count) => count > 1).length).toBeGreaterThanOrEqual(1);
  expect(requestsPerConnection.length).toBe(3);
});

test('a request with a body is not sent twice: an instance that drops it gives 502 BAD_GATEWAY, and no other instance receives it', async () => {
  const received: string[] = [];
  const dropping = (name: string) =>
    listening(
      http.createServer(
        withHealth((request) => {
          received.push(name);
          request.socket.destroy();
        }),
      ),
    );
  const slug = await registerService('dropper-post', [await dropping('a'), await dropping('b')]);
  expectProblem(await call(api.url, 'POST', `/api/${slug}/orders`, { token: viewer, body: { item: 1 } }), 502, 'BAD_GATEWAY');
  expect(received).toHaveLength(1);
});

test('a client that leaves before its answer: the instance sees the request closed, and no instance is sent it again', async () => {
  const held: string[] = [];
  const closed: string[] = [];
  const holding = (name: string) =>
    listening(
      http.createServer(
        withHealth((request, response) => {
          // Answers the probe at once; holds any other request until its client goes.
          if (request.url === '/probe') return response.end('probe');
          held.push(name);
          request.socket.once('close', () => closed.push(name));
        }),
      ),
    );
  const slug = await registerService('holder', [await holding('a'), await holding('b')]);
  const leaving = new AbortController();
  const request = fetch(`${api.url}/api/${slug}/slow`, { headers: { authorization: `Bearer ${viewer}` }, signal: leaving.signal }).catch((error) => error);
  await waitUntil('the instance to receive the request', async () => held.length === 1);
  leaving.abort();
  await request;
  await waitUntil('the instance to see the request closed', async () => closed.length === 1);
  // Two requests afterwards, one to each instance: a request sent again would have arrived before them.
  for (let i = 0; i < 2; i++) expect((await call(api.url, 'GET', `/api/${slug}/probe`, { token: viewer })).text).toBe('probe');
  expect(held).toHaveLength(1);
  expect(closed).toEqual(held);
});

test('a large answer reaches the client whole, and a client that stops reading holds the instance back', async () => {
  const chunk = crypto.randomBytes(1024 * 1024);
  const chunks = 64;
  const expected = crypto.createHash('sha256');
  for (let i = 0; i < chunks; i++) expected.update(chunk);
  let written = 0;
  const instance = await listening(
    http.createServer(
      withHealth(async (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(chunks * chunk.length) });
        for (let i = 0; i < chunks; i++) {
          if (!response.write(chunk)) await new Promise((resolve) => response.once('drain', resolve));
          written += chunk.length;
        }
        response.end();
      }),
    ),
  );
  const slug = await registerService('streamer', [instance]);
  const answer = await new Promise<http.IncomingMessage>((resolve, reject) => {
    http.get(`${api.url}/api/${slug}/file`, { headers: { authorization: `Bearer ${viewer}` } }, resolve).on('error', reject);
  });
  expect(answer.statusCode).toBe(200);
  answer.pause();
  // Socket buffers on both hops hold some megabytes; a gateway that kept reading would take all 64 MiB.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  expect(written).toBeLessThan(48 * chunk.length);
  const received = crypto.createHash('sha256');
  let bytes = 0;
  for await (const part of answer) {
    received.update(part as Buffer);
    bytes += (part as Buffer).length;
  }
  expect(bytes).toBe(chunks * chunk.length);
  expect(received.digest('hex')).toBe(expected.digest('hex'));
});

test('a flood of unknown slugs is answered 404 by the edge itself: not one of them reaches the API', async () => {
  const edge = platform.edge()!;
  const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => call(api.url, 'GET', `/api/no-such-slug-${i}/x`, { token: viewer })));
  expect(answers.every((answer) => answer.status === 404 && answer.body.code === 'NOT_FOUND')).toBe(true);
  const logged = await waitUntil('the edge to log the flood', () => {
    const lines = edge
      .output()
      .split('\n')
      .filter((line) => line.includes('/api/no-such-slug-'))
      .map((line) => JSON.parse(line) as { status: number; upstream: string | null });
    return lines.length === 200 ? lines : null;
  });
  // An answer the edge made itself has no upstream host: the API behind it was never asked.
  expect(logged.every((line) => line.status === 404 && (line.upstream === null || line.upstream === '-'))).toBe(true);
});

test('registered means routable: a new instance the edge cannot route to fails the run (EDGE_NOT_ROUTING, final); once it routes, the wait ends', async () => {
  let healthy = false;
  const instance = await listening(
    http.createServer((request, response) => {
      if (request.url === DEFAULT_HEALTH_PATH) return void response.writeHead(healthy ? 200 : 503, { connection: 'close' }).end();
      response.end('ok');
    }),
  );
  await insertService('unreachable', [instance]);
  const wait = (withinMs: number) => untilEdgeRoutes(platform.config.edge.adminUrl, { serviceName: 'unreachable', routed: [addressOf(instance)], withinMs });
  await expect(wait(2000)).rejects.toMatchObject({ type: 'EDGE_NOT_ROUTING', nonRetryable: true, message: expect.stringContaining(addressOf(instance)) });
  healthy = true;
  await expect(wait(10000)).resolves.toBeUndefined();
  expect((await call(api.url, 'GET', '/api/unreachable/x', { token: viewer })).text).toBe('ok');
});
