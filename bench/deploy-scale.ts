/**
 * `npx tsx bench/deploy-scale.ts [--sizes 2,20,200] [--at-once 8] [--ticks 3] [--new 3]` (#63): the deploy
 * side at 2, 20 and 200 deployed services. Each service is a real container of a tiny image (a static Go
 * server, bench/tiny-service, built here and imported as `opsflow-bench/tiny:1`) with the edge's real health
 * checks; 200 JVMs would not fit on a small machine. At each size it prints:
 * - the reconcile tick: a `reconcileServices` run (as the schedule starts it) until it ends, in ms a service;
 * - the edge's rewrite: the control plane's reading of the registry and its writing of Envoy's files, from
 *   nothing, with nothing changed, and with one service added; and how long after the clusters' file Envoy
 *   had taken it (its own `cds.update_time`);
 * - a new deploy's seconds from the request to the first 200 through the edge (`--new` of them, median);
 * - the CPU Envoy and the API spend in 10 idle seconds (Envoy health-checks every instance), and each
 *   process's peak memory.
 * The API runs behind the edge as production runs it; the deployments worker reads the edge's admin.
 */
import { ChildProcess, execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { signToken } from '../api/http/sign-token';
import { createDocker } from '../adapters/docker';
import { edgePlanOf, edgeSettingsOf } from '../edge/control-plane';
import { writeEdgeConfig } from '../edge/files';
import { registryForEdge } from '../data/deploy/registry-changes';
import { secretKeysOf } from '../lib/secrets';
import { fairShareOf } from '../domain/fairness';
import { TaskQueues } from '../domain/task-queues';
import { removeScopedDockerObjects } from '../test/support/docker-cleanup';
import { RunningEdgePlatform, startApiBehindEdge } from './edge-platform';
import { deployStages } from './deploy-stages';
import { slugOf } from '../domain/deploy';
import { waitUntil } from '../test/support/wait';
import { cpuMicros, median } from './load';
import { BenchPlatform, peakMemoryMb, ROOT, startBenchPlatform, runBench } from './support';

const SCOPE = 'opsflow-bench-scale';
const IMAGE = 'opsflow-bench/tiny:1';

/** Builds the tiny service with the machine's Go and imports it as an image of one file, labelled with the bench's scope (removed at the end). */
function buildTinyImage(): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-tiny-'));
  try {
    execFileSync('go', ['build', '-trimpath', '-ldflags=-s -w', '-o', path.join(dir, 'server'), 'main.go'], {
      cwd: path.join(ROOT, 'bench', 'tiny-service'),
      env: { ...process.env, CGO_ENABLED: '0' },
      stdio: 'inherit',
    });
    execFileSync('tar', ['-C', dir, '-cf', path.join(dir, 'image.tar'), 'server']);
    execFileSync('docker', ['import', '--change', 'ENTRYPOINT ["/server"]', '--change', `LABEL opsflow.scope=${SCOPE}`, path.join(dir, 'image.tar'), IMAGE], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

interface Deployer {
  /** Deploys `name` from the tiny image; resolves once its run has ended (it throws if the run failed). */
  deploy(name: string): Promise<void>;
  /** Seconds from the request to the first 200 through the edge at `/api/{slug}/`, and the run's stages. */
  untilFirst200(name: string): Promise<{ seconds: number; stages: string[] }>;
}

function deployerOf(platform: BenchPlatform, edgeUrl: string, token: string): Deployer {
  const request = async (name: string) => {
    const answer = await fetch(`${edgeUrl}/api/infra/deploy`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, image: IMAGE, port: 8080, healthPath: '/health' }),
    });
    const body = (await answer.json()) as { workflowId: string; runId: string };
    if (answer.status !== 202) throw new Error(`the deploy of ${name} was refused: ${JSON.stringify(body)}`);
    return body;
  };
  const ended = (body: { workflowId: string; runId: string }) => platform.temporal.client.workflow.getHandle(body.workflowId, body.runId).result();
  return {
    deploy: async (name) => void (await ended(await request(name))),
    async untilFirst200(name) {
      const started = performance.now();
      const requestedAt = Date.now();
      const accepted = await request(name);
      const slug = slugOf(name);
      const answers200 = async () => {
        const answer = await fetch(`${edgeUrl}/api/${slug}/`, { headers: { authorization: `Bearer ${token}` } }).catch(() => null);
        await answer?.arrayBuffer();
        return answer?.status === 200;
      };
      await waitUntil(`a 200 from ${slug} through the edge`, answers200, { timeoutMs: 120000, intervalMs: 50 });
      const seconds = (performance.now() - started) / 1000;
      await ended(accepted);
      return { seconds, stages: await deployStages(platform.temporal.client, accepted.workflowId, requestedAt) };
    },
  };
}

/** Deploys `names`, `atOnce` at a time. */
async function deployAll(deployer: Deployer, names: string[], atOnce: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: atOnce }, async () => {
      while (next < names.length) await deployer.deploy(names[next++]);
    }),
  );
}

/** `ticks` reconcile runs, one after another, as the schedule starts them; ms of each. */
async function reconcileTicks(platform: BenchPlatform, size: number, ticks: number): Promise<number[]> {
  const timings = platform.config.deploy;
  const took: number[] = [];
  for (let tick = 1; tick <= ticks; tick++) {
    const started = performance.now();
    const result = (await platform.temporal.client.workflow.execute('reconcileServices', {
      workflowId: `bench-reconcile-${size}-${tick}-${Date.now()}`,
      taskQueue: TaskQueues.deployments,
      args: [{ healthTimeoutSeconds: timings.healthTimeoutSeconds, drainSeconds: timings.drainSeconds }],
      priority: fairShareOf('reconcile'),
    })) as { services: string[]; skipped: string[]; failed: string[] };
    took.push(performance.now() - started);
    if (result.failed.length > 0) throw new Error(`the reconcile failed for ${result.failed.join(', ')}`);
    if (result.services.length < size) throw new Error(`the reconcile saw ${result.services.length} services, not ${size}`);
  }
  return took;
}

/** The control plane's rewrite, timed: the registry read into a plan, then Envoy's files written into `dir`. */
async function timedRewrite(platform: BenchPlatform, dir: string): Promise<{ readMs: number; writeMs: number }> {
  const registry = registryForEdge(platform.db, platform.config.databaseUrl, secretKeysOf(platform.config));
  const started = performance.now();
  const plan = await edgePlanOf(registry, platform.config, edgeSettingsOf(platform.config, dir));
  const read = performance.now();
  writeEdgeConfig(plan);
  return { readMs: read - started, writeMs: performance.now() - read };
}

/** ms from the clusters' file being written to Envoy having taken it (Envoy's gauge of its last CDS update). */
async function envoyTookAfterMs(adminUrl: string, edgeDir: string): Promise<number> {
  const stats = await (await fetch(`${adminUrl}/stats?filter=^cluster_manager\\.cds\\.update_time$`)).text();
  const updated = Number(/update_time: (\d+)/.exec(stats)?.[1] ?? NaN);
  return updated - fs.statSync(path.join(edgeDir, 'cds.json')).mtimeMs;
}

const fixed = (values: number[], digits = 0) => values.map((value) => value.toFixed(digits)).join(', ');

interface Bench {
  platform: BenchPlatform;
  deployer: Deployer;
  edge: RunningEdgePlatform;
  worker: ChildProcess;
  /** Where each size's control plane writes its scratch copy of Envoy's files. */
  scratch: string;
  ticks: number;
  newDeploys: number;
}

/** `count` new deploys, each timed to its first 200, with the control plane's rewrite and Envoy's update after each. */
async function newDeploys(bench: Bench, size: number, sizeDir: string): Promise<{ first200: number[]; oneAdded: number[] }> {
  const first200: number[] = [];
  const oneAdded: number[] = [];
  const envoyAfter: number[] = [];
  for (let n = 1; n <= bench.newDeploys; n++) {
    const { seconds, stages } = await bench.deployer.untilFirst200(`scale-new-${size}-${n}-service`);
    first200.push(seconds);
    if (n === 1) console.log(`    the first new deploy's stages (s from the request): ${stages.join(', ')}`);
    envoyAfter.push(await envoyTookAfterMs(bench.edge.adminUrl, bench.edge.dir));
    const added = await timedRewrite(bench.platform, sizeDir);
    oneAdded.push(added.readMs + added.writeMs);
  }
  console.log(
    `    a new deploy, request to first 200 through the edge: ${fixed(first200, 2)} s; Envoy took the clusters ${fixed(envoyAfter)} ms after their file; ` +
      `control plane with one service added: ${fixed(oneAdded, 1)} ms`,
  );
  return { first200, oneAdded };
}

/** One look at the edge's admin as a deploy makes it, then 10 idle seconds: each process's CPU, and the peaks so far. */
async function idleFigures({ edge, worker }: Bench): Promise<void> {
  // What each of a deploy's looks at the edge reads: every cluster's hosts and their health.
  const looked = performance.now();
  const clusters = await (await fetch(`${edge.adminUrl}/clusters?format=json`)).text();
  console.log(`    one look at the edge (its admin's /clusters): ${(clusters.length / 1024).toFixed(0)} KiB in ${(performance.now() - looked).toFixed(1)} ms`);
  const idle = { envoy: cpuMicros(edge.edgePid), api: cpuMicros(edge.api.pid!), worker: cpuMicros(worker.pid!) };
  await new Promise((resolve) => setTimeout(resolve, 10000));
  const idleCpu = (pid: number, before: number) => ((cpuMicros(pid) - before) / 1000).toFixed(0);
  console.log(
    `    10 idle s: Envoy ${idleCpu(edge.edgePid, idle.envoy)} CPU-ms, API ${idleCpu(edge.api.pid!, idle.api)}, worker ${idleCpu(worker.pid!, idle.worker)}; ` +
      `peak memory so far: Envoy ${peakMemoryMb(edge.edgePid).toFixed(0)} MiB, API ${peakMemoryMb(edge.api.pid!).toFixed(0)}, worker ${peakMemoryMb(worker.pid!).toFixed(0)}`,
  );
}

/** Every figure at one size, `size` services deployed; its summary. */
async function measureSize(bench: Bench, size: number): Promise<string> {
  const ticks = await reconcileTicks(bench.platform, size, bench.ticks);
  console.log(`    reconcile tick: ${fixed(ticks)} ms; median ${(median(ticks) / size).toFixed(1)} ms a service`);
  const sizeDir = fs.mkdtempSync(path.join(bench.scratch, `${size}-`));
  const fromNothing = await timedRewrite(bench.platform, sizeDir);
  const unchanged = await timedRewrite(bench.platform, sizeDir);
  console.log(
    `    control plane: from nothing read ${fromNothing.readMs.toFixed(1)} ms, write ${fromNothing.writeMs.toFixed(1)} ms; ` +
      `nothing changed read ${unchanged.readMs.toFixed(1)} ms, write ${unchanged.writeMs.toFixed(1)} ms`,
  );
  const { first200, oneAdded } = await newDeploys(bench, size, sizeDir);
  await idleFigures(bench);
  return `${size}: tick ${(median(ticks) / size).toFixed(1)} ms a service, rewrite with one added ${median(oneAdded).toFixed(1)} ms, first 200 ${median(first200).toFixed(2)} s`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '2,20,200' },
      'at-once': { type: 'string', default: '8' },
      ticks: { type: 'string', default: '3' },
      new: { type: 'string', default: '3' },
    },
  });
  const sizes = values.sizes.split(',').map(Number);
  if (sizes.some((size, i) => !Number.isInteger(size) || size < 1 || (i > 0 && size <= sizes[i - 1] + Number(values.new))))
    throw new Error('--sizes are whole numbers, each above the one before plus --new');
  if (spawnSync('go', ['version']).error) throw new Error('bench/deploy-scale builds its tiny service with Go: put go on the PATH');
  console.log(`bench/deploy-scale: tiny services at ${sizes.join(', ')} deployed (${os.cpus().length} cores), ${values['at-once']} deploys at a time`);
  const platform = await startBenchPlatform({ DEPLOY_SCOPE: SCOPE, DEPLOY_NETWORK: SCOPE });
  const docker = createDocker({ dockerHost: platform.config.dockerHost }).docker;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-bench-rewrite-'));
  let edge: RunningEdgePlatform | null = null;
  try {
    await removeScopedDockerObjects(docker, SCOPE);
    buildTinyImage();
    // Their logs stay for a look when a deploy fails: the path is printed.
    const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-deploy-scale-logs-'));
    console.log(`  the API's and Envoy's logs: ${logDir}`);
    edge = await startApiBehindEdge(platform, { logDir });
    // The schedule's own ticks are put off: the bench starts each tick it times.
    const worker = await platform.startWorker(['deployments'], { EDGE_ADMIN_URL: edge.adminUrl, DEPLOY_RECONCILE_SECONDS: '86400' });
    const token = await signToken({ secret: platform.config.identity.jwtSecret, claims: { sub: 'bench-admin', roles: ['ADMIN'] } });
    const bench: Bench = {
      platform,
      deployer: deployerOf(platform, edge.edgeUrl, token),
      edge,
      worker,
      scratch,
      ticks: Number(values.ticks),
      newDeploys: Number(values.new),
    };
    let deployed = 0;
    const summary: string[] = [];
    for (const size of sizes) {
      const names = Array.from({ length: size - deployed }, (_, i) => `scale-${String(deployed + i + 1).padStart(3, '0')}-service`);
      const deployStarted = performance.now();
      await deployAll(bench.deployer, names, Number(values['at-once']));
      console.log(`  ${size} services: ${names.length} deployed in ${((performance.now() - deployStarted) / 1000).toFixed(1)} s`);
      summary.push(await measureSize(bench, size));
      deployed = size + bench.newDeploys;
    }
    console.log(`  summary: ${summary.join('; ')}`);
  } finally {
    await edge?.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
    await removeScopedDockerObjects(docker, SCOPE);
    await platform.stop();
  }
}

runBench(main);
