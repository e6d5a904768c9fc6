import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { stringify } from 'yaml';
import { loadSigningKey, serviceTokenSource } from '../../temporal-config/service-identity';
import { TEMPORAL_TLS_SERVER_NAME } from '../../temporal-config/server-certificates';
import { freePort, spawnLogged, waitForHttp } from './children';

/**
 * What the Web UI of `npm start`'s cluster may do at the locked door: read every namespace (its first call,
 * ListNamespaces, is the cluster's) and nothing else. Runs are changed through the API, never from the UI.
 */
export const TEMPORAL_UI_PERMISSIONS = ['temporal-system:read'];

export interface TemporalUi {
  /** Where the operator opens it (TEMPORAL_UI_URL). */
  url: string;
  /** The ui-server's process, kept running by the supervisor. */
  server: { exited: Promise<string>; stop(): Promise<void> };
  /** Starts the ui-server again (on a new port) behind the same address. */
  restart(): Promise<TemporalUi['server']>;
  /** Stops the ui-server and closes the address. */
  close(): Promise<void>;
}

/** The names this machine's loopback goes by: a Host of any other name (a rebound page's) is refused. */
const loopbackHosts = (port: number) => [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];

/**
 * Why a request is refused before it reaches the ui-server, or null. Its Host must be a loopback name (a
 * page rebound to 127.0.0.1 sends its own). A browser's request made by another page, of another site or
 * of this one (Mailpit shows mails at another loopback port), is refused unless it opens the UI (a GET
 * navigation): the ui-server skips its CSRF check for a request with an Authorization header, which this
 * proxy adds to every one, so such a page could otherwise run a workflow's queries through it.
 */
function refusal(request: http.IncomingMessage, port: number): string | null {
  if (!loopbackHosts(port).includes((request.headers.host ?? '').toLowerCase()))
    return 'The Temporal Web UI answers this machine only: open it at its loopback address.';
  const site = request.headers['sec-fetch-site'];
  const navigation = request.method === 'GET' && request.headers['sec-fetch-mode'] === 'navigate';
  if ((site === 'cross-site' || site === 'same-site') && !navigation) return 'The Temporal Web UI answers its own pages only.';
  const origin = request.headers.origin;
  if (origin !== undefined && !loopbackHosts(port).some((host) => origin === `http://${host}`)) return 'The Temporal Web UI answers its own pages only.';
  return null;
}

/** Headers the ui-server would turn into gRPC metadata for the door, or that end at this hop: never a caller's to set. */
const DROPPED_HEADER = /^(grpc-metadata-|authorization-extras$|caller-type$|connection$|keep-alive$|proxy-|te$|trailer$|upgrade$)/i;

/**
 * The proxy in front of the ui-server: it refuses what `refusal` refuses, and gives every other request the
 * read-only token, in place of any a caller sent. `upstream.port` is the ui-server's port, 0 while it is down.
 */
function readOnlyProxy(port: number, token: () => string, upstream: { port: number }): http.Server {
  return http.createServer((request, response) => {
    const refused = refusal(request, port);
    if (refused) {
      response.writeHead(403, { 'content-type': 'text/plain' }).end(`${refused}\n`);
      return;
    }
    if (upstream.port === 0) {
      response.writeHead(502, { 'content-type': 'text/plain' }).end('The Temporal Web UI is starting again; npm start restarts it.\n');
      return;
    }
    const headers: http.OutgoingHttpHeaders = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !DROPPED_HEADER.test(name)));
    headers.authorization = `Bearer ${token()}`;
    const forwarded = http.request({ host: '127.0.0.1', port: upstream.port, method: request.method, path: request.url, headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    forwarded.once('error', (error) => {
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' });
      response.end(`The Temporal Web UI is not answering (${error.message}); npm start restarts it.\n`);
    });
    request.pipe(forwarded);
  });
}

interface TemporalUiArgs {
  binary: string;
  dir: string;
  doorAddress: string;
  caFile: string;
  identityDir: string;
  uiUrl: string;
  namespace: string;
  codecEndpoint: string;
  logFile: string;
}

/** The ui-server's configuration: the door over TLS, read-only, this UI's origin only, payloads opened by the API's codec endpoint. */
function uiServerConfig(args: TemporalUiArgs, url: URL, port: number): string {
  return stringify({
    temporalGrpcAddress: args.doorAddress,
    host: '127.0.0.1',
    port,
    enableUi: true,
    defaultNamespace: args.namespace,
    notifyOnNewVersion: false,
    refreshInterval: '0s',
    disableWriteActions: true,
    cors: { allowOrigins: [url.origin], unsafeAllowAllOrigins: false, cookieInsecure: url.protocol === 'http:' },
    tls: { caFile: args.caFile, serverName: TEMPORAL_TLS_SERVER_NAME, enableHostVerification: true },
    codec: { endpoint: args.codecEndpoint, passAccessToken: false, includeCredentials: false },
    forwardHeaders: [],
  });
}

/**
 * The Temporal Web UI of `TEMPORAL_SERVER=cluster npm start`, on TEMPORAL_UI_URL as the dev server's is.
 * The door lets nothing in without a token the nodes trust, and the ui-server has no token of its own (it
 * forwards a request's Authorization header), so it listens on a loopback port of its own behind a small
 * proxy that gives every request a read-only token signed with the platform's key (TEMPORAL_UI_PERMISSIONS),
 * renewed before it expires. Like the dev server's UI it is for this machine alone: loopback only, and a
 * request whose Host is not a loopback name is refused (a page rebound to 127.0.0.1 sends its own), so a
 * page elsewhere cannot read through it. Payloads are sealed; the UI opens them through the API's codec
 * endpoint, which in development answers this UI's origin on this machine.
 */
export async function serveTemporalUi(args: TemporalUiArgs): Promise<TemporalUi> {
  const url = new URL(args.uiUrl);
  const port = Number(url.port || 80);
  const token = serviceTokenSource(loadSigningKey(args.identityDir), { subject: 'opsflow-web-ui', permissions: TEMPORAL_UI_PERMISSIONS });
  const upstream = { port: 0 };
  const proxy = readOnlyProxy(port, token, upstream);
  await new Promise<void>((resolve, reject) => {
    proxy.once('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(`the Temporal Web UI cannot listen on ${args.uiUrl} (${error.code}): set TEMPORAL_UI_URL to a free loopback port`)),
    );
    proxy.listen(port, '127.0.0.1', () => resolve());
  });

  const configDir = path.join(args.dir, 'config');
  fs.mkdirSync(configDir, { recursive: true });
  const start = async (): Promise<TemporalUi['server']> => {
    for (let attempt = 1; ; attempt++) {
      // The ui-server binds its port itself: a start that finds it taken tries another (below).
      upstream.port = await freePort();
      fs.writeFileSync(path.join(configDir, 'development.yaml'), uiServerConfig(args, url, upstream.port));
      const { child, exit, exited, said, stop } = spawnLogged(
        args.binary,
        ['--root', args.dir, '--config', 'config', '--env', 'development', 'start'],
        args.logFile,
        {
          env: { PATH: process.env.PATH },
        },
      );
      const serverPort = upstream.port;
      // Once it exits its port is nobody's: nothing is forwarded there (another process could take it) until a start picks a new one.
      child.once('exit', () => {
        if (upstream.port === serverPort) upstream.port = 0;
      });
      try {
        await waitForHttp(`http://127.0.0.1:${serverPort}/`, {
          what: 'Temporal Web UI',
          deadlineMs: 30000,
          isUp: (status) => status < 500,
          stopIf: () => (exit() !== null ? `exited (${exit()})` : null),
        });
        // What answered must be this child (still running, its port still the one forwarded to), not a process that took the port.
        if (child.exitCode !== null || child.signalCode !== null || upstream.port !== serverPort) throw new Error('it exited while starting');
        return { exited, stop };
      } catch (error) {
        await stop();
        // Taken between the pick and the ui-server's bind: another port.
        if (/address already in use/.test(said()) && attempt < 3) continue;
        throw new Error(`the Temporal Web UI did not start: ${(error as Error).message}; see ${args.logFile}`, { cause: error });
      }
    }
  };

  let server: TemporalUi['server'];
  try {
    server = await start();
  } catch (error) {
    proxy.close();
    throw error;
  }
  return {
    url: url.origin,
    server,
    restart: async () => (server = await start()),
    close: async () => {
      await server.stop();
      const closed = new Promise<void>((resolve) => proxy.close(() => resolve()));
      // A browser's kept-alive connections would hold the close (and Ctrl-C) open.
      proxy.closeAllConnections();
      await closed;
    },
  };
}
