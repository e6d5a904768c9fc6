/**
 * The edge's TLS beside plain HTTP, for bench/deploy (#64): one deployed service is given a hostname and a
 * self-signed certificate, then the same service and path are loaded over HTTPS (by hostname, SNI) and over
 * plain HTTP (by the slug's path, as the bench's other figures are: plain HTTP redirects a certified name),
 * in alternating rounds, so a machine getting faster or slower weighs on both.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { cpuMicros, get, line, load, Load, median, wrk } from './load';
import { peakMemoryMb } from './support';

const HOSTNAME = 'bench.example.test';

export interface EdgeTlsArgs {
  /** The edge's plain HTTP, `http://127.0.0.1:{port}`. */
  edgeUrl: string;
  /** The edge's HTTPS port (EDGE_TLS_PORT). */
  tlsPort: number;
  /** Envoy's admin, for its TLS counters. */
  adminUrl: string;
  edgePid: number;
  /** An ADMIN token: it uploads the certificate, and is the bearer token of every request measured. */
  token: string;
  service: { name: string; slug: string };
  /** The path on the service, as `/x`. */
  path: string;
  rounds: number;
  requests: number;
  concurrency: number;
  seconds: number;
}

/** A self-signed P-256 certificate for the hostname, as the operator makes one, and its key. */
function selfSigned(dir: string): { certificate: string; privateKey: string } {
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  execFileSync('openssl', [
    ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'],
    ...['-subj', `/CN=${HOSTNAME}`, '-addext', `subjectAltName=DNS:${HOSTNAME}`, '-keyout', keyFile, '-out', certFile],
  ]);
  return { certificate: fs.readFileSync(certFile, 'utf8'), privateKey: fs.readFileSync(keyFile, 'utf8') };
}

/** What the edge shows for the hostname: its certificate's serial and the TLS negotiated, or null while it shows none. */
function handshake(port: number, ca: string): Promise<{ serial: string; protocol: string; cipher: string } | null> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: HOSTNAME, ca }, () => {
      resolve({ serial: socket.getPeerCertificate().serialNumber.toLowerCase(), protocol: socket.getProtocol() ?? '?', cipher: socket.getCipher().name });
      socket.end();
    });
    socket.once('error', () => resolve(null));
  });
}

/** Polls `probe` every 200 ms until it answers something, for at most a minute. */
async function until<T>(what: string, probe: () => Promise<T | null>): Promise<T> {
  const deadline = performance.now() + 60000;
  for (;;) {
    const found = await probe();
    if (found !== null) return found;
    if (performance.now() > deadline) throw new Error(`${what} within a minute`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** One GET over HTTPS to the edge by hostname (SNI and Host), as wrk sends it; 0 for a failure. */
function httpsGet(args: { port: number; ca: string; path: string; headers: Record<string, string>; agent: https.Agent }): Promise<number> {
  return new Promise((resolve) => {
    const options = { host: '127.0.0.1', port: args.port, servername: HOSTNAME, ca: args.ca, path: args.path, agent: args.agent };
    const request = https.get({ ...options, headers: { host: `${HOSTNAME}:${args.port}`, ...args.headers } }, (answer) => {
      answer.resume();
      answer.on('end', () => resolve(answer.statusCode ?? 0));
    });
    request.on('error', () => resolve(0));
  });
}

/**
 * Gives the service the hostname and uploads a certificate for it, as an operator does; answers once the
 * edge shows that certificate for the name and routes it to the service.
 */
async function certify(args: EdgeTlsArgs, dir: string) {
  const headers = { authorization: `Bearer ${args.token}`, 'content-type': 'application/json' };
  const put = async (apiPath: string, body: unknown) => {
    const answer = await fetch(`${args.edgeUrl}${apiPath}`, { method: 'PUT', headers, body: JSON.stringify(body) });
    if (answer.status !== 200) throw new Error(`PUT ${apiPath} answered ${answer.status}: ${await answer.text()}`);
  };
  const upload = selfSigned(dir);
  await put(`/api/infra/services/${args.service.name}/domains`, { domains: [HOSTNAME] });
  await put(`/api/infra/services/${args.service.name}/domains/${HOSTNAME}/certificate`, upload);
  const serial = new X509Certificate(upload.certificate).serialNumber.toLowerCase();
  const shown = await until(`no handshake for ${HOSTNAME} showing the uploaded certificate on port ${args.tlsPort}`, async () => {
    const now = await handshake(args.tlsPort, upload.certificate);
    return now?.serial === serial ? now : null;
  });
  const agent = new https.Agent({ keepAlive: false });
  const bearer = { authorization: `Bearer ${args.token}` };
  await until(`no 200 from https://${HOSTNAME}:${args.tlsPort}${args.path}`, async () =>
    (await httpsGet({ port: args.tlsPort, ca: upload.certificate, path: args.path, headers: bearer, agent })) === 200 ? true : null,
  );
  return { ca: upload.certificate, shown };
}

/** The edge's HTTPS listener's handshakes so far, and how many of them resumed a session, from Envoy's counters. */
async function handshakeCounters(adminUrl: string, port: number): Promise<{ handshakes: number; resumed: number }> {
  const stats = await (await fetch(`${adminUrl}/stats?filter=ssl\\.(handshake|session_reused)$`)).text();
  const counter = (name: string) => {
    const found = new RegExp(`^listener\\.\\S*_${port}\\.ssl\\.${name}: (\\d+)$`, 'm').exec(stats);
    if (!found) throw new Error(`Envoy's admin has no ssl.${name} counter for the listener on ${port}`);
    return Number(found[1]);
  };
  return { handshakes: counter('handshake'), resumed: counter('session_reused') };
}

interface Row {
  name: string;
  tls: boolean;
  /** One run; `warm` a short one, not measured. */
  run(warm: boolean): Promise<{ load: Load; served: number }>;
}

/** The six runs of a round: kept-alive and new connections, by wrk and by the Node client, each over plain HTTP and HTTPS. */
function rowsOf(args: EdgeTlsArgs, ca: string, dir: string): Row[] {
  const bearer = { authorization: `Bearer ${args.token}` };
  const plainUrl = `${args.edgeUrl}/api/${args.service.slug}${args.path}`;
  // wrk takes SNI and Host from the URL: the URL names the hostname, and this script connects it to the edge here.
  const script = path.join(dir, 'resolve.lua');
  fs.writeFileSync(script, 'function wrk.resolve(host, service)\n  wrk.addrs = wrk.lookup("127.0.0.1", service)\nend\n');
  const byWrk = (name: string, useTls: boolean, headers: Record<string, string>): Row => ({
    name,
    tls: useTls,
    run: async (warm) => {
      const seconds = warm ? Math.min(2, args.seconds) : args.seconds;
      const url = useTls ? `https://${HOSTNAME}:${args.tlsPort}${args.path}` : plainUrl;
      const result = wrk({ url, headers: { ...bearer, ...headers }, seconds, connections: args.concurrency, ...(useTls ? { script } : {}) });
      return { load: result, served: result.perSecond * seconds };
    },
  });
  // The Node client keeps no TLS session (maxCachedSessions 0): every request is a full handshake.
  const plainAgent = new http.Agent({ keepAlive: false });
  const tlsAgent = new https.Agent({ keepAlive: false, maxCachedSessions: 0 });
  const byNode = (name: string, request: () => Promise<number>, useTls: boolean): Row => ({
    name,
    tls: useTls,
    run: async (warm) => {
      const requests = warm ? Math.min(1000, args.requests) : args.requests;
      return { load: await load({ request, requests, concurrency: args.concurrency }), served: requests };
    },
  });
  return [
    byWrk('http kept', false, {}),
    byWrk('https kept', true, {}),
    byWrk('http close', false, { connection: 'close' }),
    byWrk('https close', true, { connection: 'close' }),
    byNode('http new', () => get(plainUrl, bearer, plainAgent), false),
    byNode('https new', () => httpsGet({ port: args.tlsPort, ca, path: args.path, headers: bearer, agent: tlsAgent }), true),
  ];
}

interface RowResults {
  loads: Load[];
  /** Envoy's CPU per request, µs, each round. */
  cpu: number[];
  handshakes: number;
  resumed: number;
}

/** `rounds` rounds of every row in turn, each row's Envoy CPU per request and (over HTTPS) the handshakes Envoy counted. */
async function alternate(args: EdgeTlsArgs, rows: Row[]): Promise<Map<string, RowResults>> {
  const results = new Map(rows.map((row) => [row.name, { loads: [], cpu: [], handshakes: 0, resumed: 0 } as RowResults]));
  for (const row of rows) await row.run(true);
  for (let round = 1; round <= args.rounds; round++) {
    for (const row of rows) {
      const countersBefore = row.tls ? await handshakeCounters(args.adminUrl, args.tlsPort) : null;
      const cpuBefore = cpuMicros(args.edgePid);
      const { load: result, served } = await row.run(false);
      const kept = results.get(row.name)!;
      kept.cpu.push((cpuMicros(args.edgePid) - cpuBefore) / served);
      kept.loads.push(result);
      if (countersBefore) {
        const after = await handshakeCounters(args.adminUrl, args.tlsPort);
        kept.handshakes += after.handshakes - countersBefore.handshakes;
        kept.resumed += after.resumed - countersBefore.resumed;
      }
      console.log(line(`${row.name} r${round}`, result));
    }
  }
  return results;
}

/** A row's medians over the rounds (its errors summed), its Envoy CPU per request, and over HTTPS the handshakes Envoy counted. */
function medianLine(name: string, results: RowResults): string {
  const loads = results.loads;
  const middle: Load = {
    perSecond: median(loads.map((l) => l.perSecond)),
    p50: median(loads.map((l) => l.p50)),
    p99: median(loads.map((l) => l.p99)),
    errors: loads.reduce((sum, l) => sum + l.errors, 0),
  };
  const handshakes = results.handshakes > 0 ? `; ${results.handshakes} handshakes, ${results.resumed} of them resumed` : '';
  return `${line(name, middle)}   Envoy CPU ${median(results.cpu).toFixed(0).padStart(4)} µs per request${handshakes}`;
}

/**
 * Certifies the service's hostname, loads it over HTTPS and plain HTTP through the edge and prints the table
 * "edge TLS vs plain HTTP"; answers the summary's line.
 */
export async function measureEdgeTls(args: EdgeTlsArgs): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-bench-tls-'));
  const peakBefore = peakMemoryMb(args.edgePid);
  try {
    const { ca, shown } = await certify(args, dir);
    console.log(
      `  edge TLS vs plain HTTP: ${args.service.name} at ${args.path} by https://${HOSTNAME}:${args.tlsPort} (SNI; ${shown.protocol}, ${shown.cipher}, ` +
        `a self-signed P-256 certificate) and at /api/${args.service.slug}${args.path} by ${args.edgeUrl}; ${args.rounds} rounds, ` +
        `wrk 1 thread ${args.concurrency} connections ${args.seconds} s a run, the Node client ${args.requests} requests ${args.concurrency} at a time`,
    );
    console.log(
      '    kept: wrk, kept-alive connections; close: wrk, `Connection: close` (wrk resumes a TLS session when it can); ' +
        'new: the Node client, a new connection per request, no TLS session kept (a full handshake each)',
    );
    const rows = rowsOf(args, ca, dir);
    const results = await alternate(args, rows);
    const ratio = (kind: string) =>
      median(results.get(`https ${kind}`)!.loads.map((l, i) => l.perSecond / results.get(`http ${kind}`)!.loads[i].perSecond)).toFixed(2);
    console.log(`  edge TLS vs plain HTTP, medians of ${args.rounds} rounds:`);
    for (const row of rows) console.log(medianLine(row.name, results.get(row.name)!));
    console.log(`    https / http rate, median of ${args.rounds} rounds: kept ${ratio('kept')}, close ${ratio('close')}, new ${ratio('new')}`);
    console.log(`  peak memory: envoy ${peakMemoryMb(args.edgePid).toFixed(0)} MiB after the TLS runs (${peakBefore.toFixed(0)} MiB before them)`);
    const kept = results.get('https kept')!;
    const fresh = results.get('https new')!;
    const p99 = (row: RowResults) => median(row.loads.map((l) => l.p99)).toFixed(2);
    return (
      `edge TLS kept-alive (wrk) ${ratio('kept')} of plain HTTP's rate, p99 ${p99(kept)} ms; ` +
      `a full handshake per request (Node) ${median(fresh.loads.map((l) => l.perSecond)).toFixed(0)} per second, ${ratio('new')} of plain HTTP's ` +
      `new TCP connections, p99 ${p99(fresh)} ms, Envoy CPU ${median(fresh.cpu).toFixed(0)} µs per request (${median(results.get('http new')!.cpu).toFixed(0)} µs over plain HTTP)`
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
