/**
 * `npx tsx bench/deploy.ts [--requests 5000] [--concurrency 16]`: deploys a small JAR (the base image
 * present) and prints the seconds from the upload to the first 200 through the gateway, then the gateway's
 * requests per second and p50/p99 latency beside the same container called directly, in the same run, with
 * the same client (a new connection per request).
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { signToken } from '../api/http/sign-token';
import { createDocker } from '../data/docker';
import { buildJar, postJar } from '../test/deploy/jars';
import { removeScopedDockerObjects } from '../test/support/docker-cleanup';
import { typescriptCommand } from '../scripts/platform/children';
import { freePort } from '../test/support/slots';
import { ROOT, startBenchPlatform } from './support';

const SCOPE = 'opsflow-bench';

interface Load {
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

// Both runs use the same client: a new connection per request, as the gateway itself makes to instances.
const agent = new http.Agent({ keepAlive: false });

function get(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const request = http.get(url, { headers, agent }, (answer) => {
      answer.resume();
      answer.on('end', () => resolve(answer.statusCode ?? 0));
    });
    request.on('error', () => resolve(0));
  });
}

async function load(url: string, headers: Record<string, string>, requests: number, concurrency: number): Promise<Load> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < requests) {
        const t = performance.now();
        if ((await get(url, headers)) !== 200) errors++;
        latencies.push(performance.now() - t);
      }
    }),
  );
  const wallMs = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))];
  return { perSecond: latencies.length / (wallMs / 1000), p50: at(50), p99: at(99), errors };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { requests: { type: 'string', default: '5000' }, concurrency: { type: 'string', default: '16' } } });
  const requests = Number(values.requests);
  const concurrency = Number(values.concurrency);
  console.log(`bench/deploy: a small JAR on opsflow/jre:17, then ${requests} requests ${concurrency} at a time (${os.cpus().length} cores)`);
  const platform = await startBenchPlatform({ DEPLOY_BASE_IMAGE: 'opsflow/jre:17', DEPLOY_SCOPE: SCOPE, DEPLOY_NETWORK: 'opsflow-bench' });
  const docker = createDocker({ dockerHost: platform.config.dockerHost });
  await removeScopedDockerObjects(docker.docker, SCOPE);
  await platform.startWorker(['deployments']);
  const admin = await signToken({ secret: platform.config.jwtSecret, claims: { sub: 'bench-admin', roles: ['ADMIN'] } });
  const jar = await buildJar({ mainClass: 'HelloServer', entries: { 'application.properties': 'spring.application.name=bench-service\n' } });

  const uploaded = performance.now();
  const accepted = await postJar({ apiUrl: platform.apiUrl, token: admin, jar });
  if (accepted.status !== 202) throw new Error(`deploy refused: ${JSON.stringify(accepted.body)}`);
  // The gateway measured runs as its own process, as in production, not inside this load generator.
  const gatewayPort = await freePort();
  const gatewayProcess = spawn(...typescriptCommand('api/server.ts'), { cwd: ROOT, env: { ...platform.env, API_PORT: String(gatewayPort) }, stdio: 'ignore' });
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
  const deploySeconds = (performance.now() - uploaded) / 1000;

  const service = (await (await fetch(`${platform.apiUrl}/api/infra/services/bench-service`, { headers: auth })).json()) as { instances: Array<{ address: string }> };
  const direct = `http://${service.instances[0].address}/x`;
  await load(direct, {}, 1000, concurrency); // the JVM warms up before either is measured
  await load(gateway, auth, 1000, concurrency);
  const directLoad = await load(direct, {}, requests, concurrency);
  const gatewayLoad = await load(gateway, auth, requests, concurrency);

  const line = (name: string, result: Load) =>
    `  ${name.padEnd(28)} ${result.perSecond.toFixed(0).padStart(6)} requests/s   p50 ${result.p50.toFixed(2).padStart(6)} ms   p99 ${result.p99.toFixed(2).padStart(7)} ms   errors ${result.errors}`;
  console.log(`  upload to first 200 through the gateway: ${deploySeconds.toFixed(1)} s`);
  console.log(line('direct to the container', directLoad));
  console.log(line('through the gateway', gatewayLoad));
  console.log(`  gateway / direct rate: ${(gatewayLoad.perSecond / directLoad.perSecond).toFixed(2)}`);

  gatewayProcess.kill('SIGTERM');
  await removeScopedDockerObjects(docker.docker, SCOPE);
  await platform.stop();
  process.exit(0);
}

void main();
