import { IncomingHttpHeaders } from 'node:http';
import { Context, Middleware } from 'koa';
import { Agent, Dispatcher } from 'undici';
import { requireUser } from '../../http/identity';
import { notFound, PlatformError, unavailable } from '../../../lib/errors';
import { Db } from '../../../data/db';
import { Route, routingTable } from '../../../data/deploy/registry';
import { RESERVED_SLUGS } from '../../../domain/deploy';

const GATEWAY_PATH = /^\/api\/([a-z0-9][a-z0-9-]*)(\/.*)?$/;

/**
 * Hop-by-hop headers (RFC 9110 §7.6.1) stay with their connection; the JWT stays at the gateway. `Expect`
 * too: the gateway's server has already answered the client's `100-continue` itself.
 */
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'authorization', 'expect']);
const NOT_RETURNED = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** Methods whose requests are sent without a body, so a refused connection can be tried again elsewhere. */
const BODYLESS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The instances are called through undici rather than `http.request`: side by side on this project's
 * machine, a bare proxy spent less CPU per request with it (README, Benchmarks). Requests without a body go over kept-alive sockets: a new
 * connection per request costs the gateway more than the forwarding itself. A kept-alive socket the
 * instance closed meanwhile (it was stopped) fails before any answer, and the request is sent again on a
 * new connection. Requests with a body cannot be sent twice, so each gets a connection of its own
 * (`pipelining: 0`). Idle sockets close sooner than common servers' keep-alive timeouts (Node 5 s, Tomcat
 * 20 s), so the instance never closes one under a request being written. No headers or body timeout: a
 * service may stream its answer (server-sent events, long polls) for as long as it likes.
 */
const pooled = new Agent({ keepAliveTimeout: 4000, keepAliveMaxTimeout: 4000, headersTimeout: 0, bodyTimeout: 0 });
const fresh = new Agent({ pipelining: 0, headersTimeout: 0, bodyTimeout: 0 });

class InstanceUnreachable extends Error {
  constructor(cause: unknown) {
    super('the instance did not answer', { cause });
  }
}

/** Where a request came from: the gateway states it itself, from the connection it sees; a client's own claims go. */
const ORIGIN_HEADER = /^(forwarded|x-forwarded-.+|x-real-ip)$/;

/** A node of RFC 7239's `Forwarded`: an IPv6 address is quoted and bracketed. */
const forwardedNode = (address: string) => (address.includes(':') ? `"[${address}]"` : address);

function forwardedHeaders(ctx: Context, slug: string): IncomingHttpHeaders {
  // RFC 9110 §7.6.1: the headers a client names in Connection are for this hop only. The gateway's own
  // X-User-* (set from the token) are never dropped that way.
  const hopByHop = new Set(
    ctx
      .get('connection')
      .split(',')
      .map((token) => token.trim().toLowerCase())
      .filter((token) => token && !token.startsWith('x-user-')),
  );
  const headers: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (value === undefined || NOT_FORWARDED.has(name) || hopByHop.has(name) || ORIGIN_HEADER.test(name)) continue;
    headers[name] = value;
  }
  const client = ctx.req.socket.remoteAddress ?? 'unknown';
  headers['x-forwarded-for'] = client;
  headers['x-real-ip'] = client;
  headers['x-forwarded-proto'] = ctx.protocol;
  headers['x-forwarded-host'] = ctx.host;
  headers['x-forwarded-prefix'] = `/api/${slug}`;
  headers.forwarded = `for=${forwardedNode(client)};proto=${ctx.protocol};host="${ctx.host.replace(/["\\]/g, '')}"`;
  return headers;
}

/** What is sent to an instance, decided once per request. */
interface Forward {
  path: string;
  headers: IncomingHttpHeaders;
  /** The client's body, streamed as it comes; null for bodyless methods, whose requests may be sent again. */
  body: Context['req'] | null;
}

/**
 * Writes one instance's answer straight to the client as it arrives, with the client's pace (a full socket
 * pauses the instance's). `ctx.respond = false` is Koa's way to answer by hand; ctx.status is still set, for
 * the access log and the metrics. Settles when the answer is complete or cut short; rejects with
 * InstanceUnreachable only when the instance failed before answering a client still waiting, as the request
 * may then go elsewhere.
 */
class Relay implements Dispatcher.DispatchHandler {
  private answered = false;
  private clientLeft = false;

  constructor(
    private readonly ctx: Context,
    private readonly settle: { resolve: () => void; reject: (error: InstanceUnreachable) => void },
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // The client left before its answer was complete: the instance's work on it is dropped too.
    this.ctx.res.once('close', () => {
      if (this.ctx.res.writableFinished) return;
      this.clientLeft = true;
      controller.abort(new Error('the client left'));
    });
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, answerHeaders: IncomingHttpHeaders): void {
    if (statusCode < 200) return;
    const headers: IncomingHttpHeaders = {};
    for (const [name, value] of Object.entries(answerHeaders)) {
      if (!NOT_RETURNED.has(name) && value !== undefined) headers[name] = value;
    }
    this.answered = true;
    this.ctx.status = statusCode;
    this.ctx.respond = false;
    this.ctx.res.writeHead(statusCode, headers);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.ctx.res.write(chunk)) return;
    controller.pause();
    this.ctx.res.once('drain', () => controller.resume());
  }

  onResponseEnd(): void {
    this.ctx.res.end();
    this.settle.resolve();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    // Sent elsewhere only if somebody still waits for the answer.
    if (!this.answered && !this.clientLeft) return this.settle.reject(new InstanceUnreachable(error));
    this.ctx.res.destroy();
    this.settle.resolve();
  }
}

function send(ctx: Context, address: string, forward: Forward, agent: Agent): Promise<void> {
  return new Promise((resolve, reject) => {
    agent.dispatch({ origin: `http://${address}`, method: ctx.method as Dispatcher.HttpMethod, path: forward.path, headers: forward.headers, body: forward.body }, new Relay(ctx, { resolve, reject }));
  });
}

/** A bodyless request that failed before any answer (a socket the instance closed) is sent once more on a new connection. */
async function sendToInstance(ctx: Context, address: string, forward: Forward): Promise<void> {
  if (forward.body) return send(ctx, address, forward, fresh);
  try {
    return await send(ctx, address, forward, pooled);
  } catch (error) {
    if (!(error instanceof InstanceUnreachable)) throw error;
    return send(ctx, address, forward, fresh);
  }
}

/**
 * How long the gateway reuses a slug's healthy instances before reading the registry again. Instances taken
 * out of the registry keep serving for DEPLOY_DRAIN_SECONDS (at least 1 s) before they stop, so a route this
 * fresh never points at a stopped instance.
 */
const ROUTE_TTL_MS = 500;

/**
 * After a miss (an unknown slug, or one with nothing healthy) the request waits for a read of the table
 * that starts after it arrived, in case a deploy has just registered; such reads start at most this often,
 * and every miss meanwhile waits for the same one. A flood of unknown slugs costs ten reads a second at
 * most, not one per request, and a service that has just registered is never answered 404.
 */
const MISS_REREAD_MS = 100;

const UNROUTED: Route = { service: null, addresses: [] };

interface Table {
  routes: Map<string, Route>;
  readAt: number;
}

/** The routing table, read whole and shared by every request. */
function routeTable(db: Db) {
  let table: Table | null = null;
  let lastReadStart = 0;
  let reading: Promise<Table> | null = null;
  let queued: { startAt: number; table: Promise<Table> } | null = null;

  const readNow = (): Promise<Table> => {
    lastReadStart = Date.now();
    const startedAt = lastReadStart;
    return routingTable(db).then((routes) => (table = { routes, readAt: startedAt }));
  };
  /** The table, read now unless a read is under way (expired tables). */
  const current = () => {
    if (table && Date.now() - table.readAt < ROUTE_TTL_MS) return Promise.resolve(table);
    if (!reading) {
      const pending = readNow();
      reading = pending;
      const clear = () => {
        if (reading === pending) reading = null;
      };
      pending.then(clear, clear);
    }
    return reading;
  };
  /** A read that starts at or after `arrival`, no sooner than MISS_REREAD_MS after the one before. */
  const readStartingAfter = (arrival: number): Promise<Table> => {
    if (queued && queued.startAt >= arrival) return queued.table;
    const startAt = Math.max(arrival, lastReadStart + MISS_REREAD_MS, queued ? queued.startAt + MISS_REREAD_MS : 0);
    const entry = { startAt, table: new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now()))).then(readNow) };
    queued = entry;
    const clear = () => {
      if (queued === entry) queued = null;
    };
    entry.table.then(clear, clear);
    return entry.table;
  };
  return {
    async lookup(slug: string): Promise<Route> {
      const arrival = Date.now();
      const route = (await current()).routes.get(slug);
      if (route && route.addresses.length > 0) return route;
      return (await readStartingAfter(arrival)).routes.get(slug) ?? UNROUTED;
    },
    /** Every known instance refused: read the table again on the next request. */
    forget(): void {
      table = null;
    },
  };
}

/**
 * `ANY /api/{slug}/...`: forwards to a healthy instance of the deployed service, round-robin, with the
 * path after the slug and the caller's `X-User-*` headers; bodies stream both ways. The platform's own
 * slugs are never forwarded: the gateway runs before the platform's router, and every platform route must
 * sit under a reserved slug (`platformPaths` are checked when the app is built). An unknown slug: 404
 * NOT_FOUND; no healthy instance: 503 SERVICE_UNAVAILABLE.
 */
export function gatewayProxy(args: { db: Db; platformPaths: string[] }): Middleware {
  const unreserved = args.platformPaths
    .map((path) => GATEWAY_PATH.exec(path)?.[1])
    .filter((slug): slug is string => slug !== undefined && !RESERVED_SLUGS.includes(slug));
  if (unreserved.length > 0) throw new Error(`platform routes outside the reserved slugs would be shadowed by deployed services: ${[...new Set(unreserved)].join(', ')}`);
  const turns = new Map<string, number>();
  const routes = routeTable(args.db);
  return async (ctx, next) => {
    const match = GATEWAY_PATH.exec(ctx.path);
    if (!match || RESERVED_SLUGS.includes(match[1])) {
      await next();
      return;
    }
    const slug = match[1];
    const { service, addresses } = await routes.lookup(slug);
    // An unrouted slug is an unknown route like any other, answered the same with or without a token.
    if (!service) throw notFound(`No route for ${ctx.method} ${ctx.path}.`);
    requireUser(ctx);
    if (addresses.length === 0) throw unavailable('SERVICE_UNAVAILABLE', `${service.name} has no healthy instance.`);
    const forward: Forward = {
      path: (match[2] ?? '/') + (ctx.querystring ? `?${ctx.querystring}` : ''),
      headers: forwardedHeaders(ctx, slug),
      body: BODYLESS.has(ctx.method) ? null : ctx.req,
    };
    const first = (turns.get(service.id) ?? 0) % addresses.length;
    turns.set(service.id, first + 1);
    const attempts = forward.body ? 1 : addresses.length;
    for (let attempt = 0; attempt < attempts; attempt++) {
      try {
        await sendToInstance(ctx, addresses[(first + attempt) % addresses.length], forward);
        return;
      } catch {
        // The instance refused or dropped the connection (stopped a moment ago): try the next one.
      }
    }
    // Every known instance refused: the cached route may be older than an undeploy or a scale-down.
    routes.forget();
    throw new PlatformError('BAD_GATEWAY', `${service.name} did not answer.`);
  };
}
