/**
 * `npx tsx bench/deploy.ts [--requests 5000] [--concurrency 16] [--rounds 3]`: deploys a small JAR (the base
 * image present) and prints the seconds from the upload to the first 200 through the gateway, then the
 * gateway's requests per second and p50/p99 latency beside the same container called directly, in the same
 * run, with the same client. Both are measured with two kinds of client: one that opens a new connection per
 * request, and one that keeps its connections alive (as browsers and HTTP client libraries do). Direct and
 * gateway runs alternate, round after round, so that a machine getting faster or slower during the run
 * weighs on both; the median of the rounds' ratios is the figure. Also printed: the gateway process's CPU
 * time per request and its peak memory.
 *
 * Then the same with `wrk` (1 thread, 16 connections, kept alive or `Connection: close`) as the load
 * generator, for three paths in alternating rounds: direct, the Node gateway, and Envoy (the edge, configured
 * by the platform's own control plane from the registry), with each proxy's CPU per request and peak memory.
 */
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { signToken } from '../api/http/sign-token';
import { createDocker } from '../data/docker';
import { buildJar, postJar } from '../test/deploy/jars';
import { removeScopedDockerObjects } from '../test/support/docker-cleanup';
import { typescriptCommand } from '../scripts/platform/children';
import { freePort } from '../test/support/slots';
import { peakMemoryMb, ROOT, startBenchPlatform } from './support';
import { startEdgeControlPlane } from '../api/modules/deploy/edge-control-plane';
import { createLogger } from '../lib/logger';
import { startEdge } from '../scripts/platform/edge';
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const SCOPE = 'opsflow-bench';

interface Load {
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

const CLIENTS = [
  { name: 'a new connection per request', agent: new http.Agent({ keepAlive: false }) },
  { name: 'kept-alive connections', agent: new http.Agent({ keepAlive: true }) },
];

function get(url: string, headers: Record<string, string>, agent: http.Agent): Promise<number> {
  return new Promise((resolve) => {
    const request = http.get(url, { headers, agent }, (answer) => {
      answer.resume();
      answer.on('end', () => resolve(answer.statusCode ?? 0));
    });
    request.on('error', () => resolve(0));
  });
}

async function load(args: { url: string; headers: Record<string, string>; agent: http.Agent; requests: number; concurrency: number }): Promise<Load> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: args.concurrency }, async () => {
      while (next++ < args.requests) {
        const t = performance.now();
        if ((await get(args.url, args.headers, args.agent)) !== 200) errors++;
        latencies.push(performance.now() - t);
      }
    }),
  );
  const wallMs = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
  return { perSecond: latencies.length / (wallMs / 1000), p50: at(50), p99: at(99), errors };
}

/** CPU time (user + system) a process has used, in microseconds. */
function cpuMicros(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

interface WrkLoad {
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

/** One `wrk` run: 1 thread, 16 connections, for `seconds`; latencies in ms. */
function wrk(args: { url: string; headers: Record<string, string>; seconds: number; connections: number }): WrkLoad {
  const headerArgs = Object.entries(args.headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
  const out = execFileSync('wrk', ['-t1', `-c${args.connections}`, `-d${args.seconds}s`, '--latency', ...headerArgs, args.url], { encoding: 'utf8' });
  const ms = (text: string) => {
    const [, value, unit] = /([\d.]+)(us|ms|s)/.exec(text)!;
    return Number(value) * (unit === 'us' ? 0.001 : unit === 's' ? 1000 : 1);
  };
  const percentile = (p: string) => ms(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(out)![1]);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const errors = non2xx + (socketErrors ? socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0);
  return { perSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)![1]), p50: percentile('50'), p99: percentile('99'), errors };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function line(name: string, result: Load): string {
  return `    ${name.padEnd(9)} ${result.perSecond.toFixed(0).padStart(6)} requests/s   p50 ${result.p50.toFixed(2).padStart(6)} ms   p99 ${result.p99.toFixed(2).padStart(7)} ms   errors ${result.errors}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { requests: { type: 'string', default: '5000' }, concurrency: { type: 'string', default: '16' }, rounds: { type: 'string', default: '3' } },
  });
  const requests = Number(values.requests);
  const concurrency = Number(values.concurrency);
  const rounds = Number(values.rounds);
  console.log(`bench/deploy: a small JAR on opsflow/jre:17, then ${rounds} rounds of ${requests} requests ${concurrency} at a time per client (${os.cpus().length} cores)`);
  const platform = await startBenchPlatform({ DEPLOY_BASE_IMAGE: 'opsflow/jre:17', DEPLOY_SCOPE: SCOPE, DEPLOY_NETWORK: 'opsflow-bench' });
  const docker = createDocker({ dockerHost: platform.config.dockerHost });
  let gatewayProcess: ChildProcess | null = null;
  let controlPlane: ReturnType<typeof startEdgeControlPlane> | null = null;
  let edge: Awaited<ReturnType<typeof startEdge>> | null = null;
  try {
    await removeScopedDockerObjects(docker.docker, SCOPE);
    await platform.startWorker(['deployments']);
    const admin = await signToken({ secret: platform.config.jwtSecret, claims: { sub: 'bench-admin', roles: ['ADMIN'] } });
    const jar = await buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': 'spring.application.name=bench-service\n' } });

    const uploaded = performance.now();
    const accepted = await postJar({ apiUrl: platform.apiUrl, token: admin, jar });
    if (accepted.status !== 202) throw new Error(`deploy refused: ${JSON.stringify(accepted.body)}`);
    // The gateway measured runs as its own process, as in production, not inside this load generator, and
    // writes its access log at the default level (to /dev/null).
    const gatewayPort = await freePort();
    gatewayProcess = spawn(...typescriptCommand('api/server.ts'), { cwd: ROOT, env: { ...platform.env, API_PORT: String(gatewayPort), LOG_LEVEL: 'info' }, stdio: 'ignore' });
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    while ((await fetch(`${gatewayUrl}/readyz`).catch(() => null))?.status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
    const gateway = `${gatewayUrl}/api/bench/x`;
    const auth = { authorization: `Bearer ${admin}` };
    for (;;) {
      const answer = await fetch(gateway, { headers: auth }).catch(() => null);
      if (answer?.status === 200) break;
      await answer?.arrayBuffer();
      if (performance.now() - uploaded > 120000) throw new Error('no 200 through the gateway within two minutes');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    console.log(`  upload to first 200 through the gateway: ${((performance.now() - uploaded) / 1000).toFixed(1)} s`);

    const service = (await (await fetch(`${platform.apiUrl}/api/infra/services/bench-service`, { headers: auth })).json()) as { instances: Array<{ address: string }> };
    const direct = `http://${service.instances[0].address}/x`;
    const gatewayPid = gatewayProcess.pid!;
    for (const client of CLIENTS) {
      const run = (url: string, headers: Record<string, string>, count: number) => load({ url, headers, agent: client.agent, requests: count, concurrency });
      // The JVM and the gateway are compiled hot before anything is measured.
      await run(direct, {}, 2000);
      await run(gateway, auth, 2000);
      console.log(`  client: ${client.name}`);
      const ratios: number[] = [];
      const cpuPerRequest: number[] = [];
      for (let round = 1; round <= rounds; round++) {
        const directLoad = await run(direct, {}, requests);
        const cpuBefore = cpuMicros(gatewayPid);
        const gatewayLoad = await run(gateway, auth, requests);
        cpuPerRequest.push((cpuMicros(gatewayPid) - cpuBefore) / requests);
        ratios.push(gatewayLoad.perSecond / directLoad.perSecond);
        console.log(`  round ${round}: gateway / direct rate ${ratios[ratios.length - 1].toFixed(2)}`);
        console.log(line('direct', directLoad));
        console.log(line('gateway', gatewayLoad));
      }
      console.log(`  ${client.name}: gateway / direct rate, median of ${rounds} rounds: ${median(ratios).toFixed(2)} (target 0.6); gateway CPU ${median(cpuPerRequest).toFixed(0)} µs per request`);
    }
    console.log(`  gateway process peak memory: ${peakMemoryMb(gatewayPid).toFixed(0)} MiB`);

    // The edge: Envoy on the files the platform's control plane writes from the registry.
    const edgeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-bench-edge-'));
    const listen = { host: '127.0.0.1', port: await freePort() };
    controlPlane = startEdgeControlPlane({
      db: platform.db,
      config: platform.config,
      logger: createLogger({ level: 'warn', name: 'bench' }),
      edge: { dir: edgeDir, listen, api: { host: '127.0.0.1', port: gatewayPort }, connectTimeoutMs: 1000, idleTimeoutMs: 60000 },
    });
    await controlPlane.ready;
    edge = await startEdge({ dir: edgeDir, adminPort: await freePort() });
    const edgeUrl = `http://127.0.0.1:${listen.port}/api/bench/x`;
    while ((await fetch(edgeUrl, { headers: auth }).catch(() => null))?.status !== 200) await new Promise((resolve) => setTimeout(resolve, 100));
    const edgePid = edge.pid;
    const seconds = 5;
    const paths = [
      { name: 'direct', url: direct, headers: {} as Record<string, string>, pid: null as number | null },
      { name: 'node', url: gateway, headers: auth, pid: gatewayPid },
      { name: 'envoy', url: edgeUrl, headers: auth, pid: edgePid },
    ];
    const wrkClients: Array<{ name: string; headers: Record<string, string> }> = [
      { name: 'kept-alive connections', headers: {} },
      { name: 'a new connection per request', headers: { connection: 'close' } },
    ];
    for (const client of wrkClients) {
      console.log(`  wrk, 1 thread, ${concurrency} connections, ${seconds} s a run: ${client.name}`);
      for (const target of paths) wrk({ url: target.url, headers: { ...target.headers, ...client.headers }, seconds: 2, connections: concurrency });
      const results: Record<string, WrkLoad[]> = { direct: [], node: [], envoy: [] };
      const cpu: Record<string, number[]> = { node: [], envoy: [] };
      for (let round = 1; round <= rounds; round++) {
        for (const target of paths) {
          const before = target.pid ? cpuMicros(target.pid) : 0;
          const result = wrk({ url: target.url, headers: { ...target.headers, ...client.headers }, seconds, connections: concurrency });
          if (target.pid) cpu[target.name].push((cpuMicros(target.pid) - before) / (result.perSecond * seconds));
          results[target.name].push(result);
          console.log(line(`${target.name} r${round}`, result));
        }
      }
      for (const proxy of ['node', 'envoy']) {
        const ratios = results[proxy].map((result, i) => result.perSecond / results.direct[i].perSecond);
        console.log(
          `  ${client.name}, ${proxy}: ${proxy} / direct rate, median of ${rounds} rounds: ${median(ratios).toFixed(2)}; ` +
            `p50 ${median(results[proxy].map((r) => r.p50)).toFixed(2)} ms, p99 ${median(results[proxy].map((r) => r.p99)).toFixed(2)} ms; ` +
            `CPU ${median(cpu[proxy]).toFixed(0)} µs per request`,
        );
      }
      console.log(`  direct: p50 ${median(results.direct.map((r) => r.p50)).toFixed(2)} ms, p99 ${median(results.direct.map((r) => r.p99)).toFixed(2)} ms`);
    }
    console.log(`  peak memory: node gateway ${peakMemoryMb(gatewayPid).toFixed(0)} MiB, envoy ${peakMemoryMb(edgePid).toFixed(0)} MiB`);
  } finally {
    await controlPlane?.close();
    await edge?.stop();
    gatewayProcess?.kill('SIGTERM');
    await removeScopedDockerObjects(docker.docker, SCOPE);
    await platform.stop();
  }
  process.exit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
