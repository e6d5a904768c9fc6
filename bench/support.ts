/** What every benchmark stands on: its own copy of the test platform, an API in this process, workers as processes. */
import { ChildProcess, spawn } from 'node:child_process';
import { sayWhatJaegerHolds, startBenchJaeger, stopBenchTracing } from './tracing';
import fs from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createApp } from '../api/app';
import { Config, loadConfig } from '../lib/config';
import { createLogger } from '../lib/logger';
import { createDb, Db } from '../data/db';
import { createDocker } from '../adapters/docker';
import { platformStorage } from '../api/storage';
import { connectPlatformTemporal, TemporalHandle } from '../temporal-config/client';
import { stopChild, typescriptCommand } from '../scripts/platform/children';
import { slotDatabase, slotNamespace, TEMPLATE_DATABASE, TestPlatformInfo } from '../test/support/slots';
import { installTools } from '../scripts/tools';
import { ensureTemporalServer } from '../scripts/temporal-server';
import { RunningTemporalCluster, startTemporalCluster } from '../scripts/platform/temporal-cluster';

export const ROOT = path.resolve(__dirname, '..');

function descendants(pid: number): number[] {
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const task of fs.readdirSync(`/proc/${parent}/task`)) {
      const children = fs.readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8').trim();
      for (const child of children ? children.split(/\s+/).map(Number) : []) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}

/** Peak resident memory (VmHWM) of the process tree's largest process, in MiB. */
export function peakMemoryMb(pid: number): number {
  let peak = 0;
  for (const p of [pid, ...descendants(pid)]) {
    const status = fs.readFileSync(`/proc/${p}/status`, 'utf8');
    const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
    peak = Math.max(peak, kb / 1024);
  }
  return peak;
}

/** Starts a TypeScript entry point of the project as a process; answers once its output `says` it is ready. */
export async function startEntryUntil(args: { entry: string; argv: string[]; env: NodeJS.ProcessEnv; says: string; what: string }): Promise<ChildProcess> {
  const child = spawn(...typescriptCommand(args.entry, args.argv), { cwd: ROOT, env: args.env, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  while (!out.includes(args.says)) {
    if (child.exitCode !== null) throw new Error(`${args.what} exited at start`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return child;
}

export interface BenchPlatform {
  info: TestPlatformInfo;
  env: NodeJS.ProcessEnv;
  config: Config;
  db: Db;
  temporal: TemporalHandle;
  apiUrl: string;
  dataDir: string;
  startWorker(queues: string[], extraEnv?: NodeJS.ProcessEnv): Promise<ChildProcess>;
  /** Peak memory of each Temporal cluster node, by name (none on the dev server, a process of the components). */
  clusterPeaksMb(): Record<string, number>;
  stop(): Promise<void>;
}

/** What a benchmark runs Temporal on: the dev server (npm start's default) or a cluster of two nodes behind its door. */
export type BenchTemporal = 'dev' | 'cluster';

/** `--temporal dev|cluster|both`: the Temporal setups to measure, one after the other in one run. */
export function benchTemporals(value: string | undefined): BenchTemporal[] {
  if (value === undefined || value === 'dev') return ['dev'];
  if (value === 'cluster') return ['cluster'];
  if (value === 'both') return ['dev', 'cluster'];
  throw new Error(`--temporal must be dev, cluster or both, got ${value}`);
}

/**
 * Starts the test platform's components, one migrated database and namespace, and the API on a free port;
 * with `temporal: 'cluster'`, Temporal as two nodes of the pinned server on that PostgreSQL, behind their
 * door, tokens required (as `TEMPORAL_SERVER=cluster npm start` runs it).
 */
export async function startBenchPlatform(
  extraEnv: NodeJS.ProcessEnv = {},
  options: { temporal?: BenchTemporal; fairness?: boolean } = {},
): Promise<BenchPlatform> {
  // As npm start and npm test do: the pinned tools first (Temporal's dev server, the edge).
  await installTools(['temporal', 'envoy'], (line) => console.log(line));
  const infoFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-bench-')), 'platform.json');
  // Fairness on the task queues is on, as everywhere the platform runs, unless bench/fairness.ts compares.
  const componentsEnv = { ...process.env, ...(options.fairness === false ? { OPSFLOW_TEST_FAIRNESS: 'off' } : {}) };
  const components = spawn(...typescriptCommand('test/support/test-platform.ts', [infoFile]), { cwd: ROOT, stdio: 'ignore', env: componentsEnv });
  while (!fs.existsSync(infoFile)) {
    if (components.exitCode !== null) throw new Error('the benchmark platform did not start');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const info = JSON.parse(fs.readFileSync(infoFile, 'utf8')) as TestPlatformInfo & { error?: string };
  if (info.error) throw new Error(info.error);
  const admin = new pg.Client({ connectionString: info.postgres.adminUrl });
  await admin.connect();
  await admin.query(`create database ${slotDatabase(1)} template ${TEMPLATE_DATABASE}`);
  await admin.end();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-bench-data-'));
  const jaeger = await startBenchJaeger();
  let cluster: RunningTemporalCluster | null = null;
  if (options.temporal === 'cluster') {
    const postgres = new URL(info.postgres.adminUrl);
    cluster = await startTemporalCluster({
      binaries: await ensureTemporalServer((line) => console.log(line)),
      sql: {
        host: postgres.hostname,
        port: Number(postgres.port),
        user: decodeURIComponent(postgres.username),
        password: decodeURIComponent(postgres.password),
      },
      databases: { history: 'temporal_bench', visibility: 'temporal_bench_visibility' },
      fresh: true,
      namespaces: [slotNamespace(1)],
      dir: path.join(dataDir, 'temporal-cluster'),
      identityDir: path.join(dataDir, 'temporal-identity'),
    });
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    // The benchmarks run on their own embedded components with the development secrets.
    NODE_ENV: 'development',
    DATABASE_URL: `${info.postgres.urlPrefix}${slotDatabase(1)}`,
    TEMPORAL_ADDRESS: cluster?.address ?? info.temporal.address,
    ...(cluster ? { TEMPORAL_IDENTITY_DIR: cluster.identityDir, TEMPORAL_TLS_CA_FILE: cluster.tlsCaFile } : {}),
    TEMPORAL_NAMESPACE: slotNamespace(1),
    TEMPORAL_UI_URL: info.temporal.uiUrl,
    DATA_DIR: dataDir,
    WORKFLOW_BUNDLE_PATH: info.workflowBundlePath,
    LOG_LEVEL: 'warn',
    ...extraEnv,
  };
  const config = loadConfig(env);
  const db = createDb({ databaseUrl: config.databaseUrl });
  const temporal = await connectPlatformTemporal(config, 'opsflow-bench');
  const app = createApp({
    config,
    db,
    temporal,
    docker: createDocker({ dockerHost: null }),
    ...platformStorage({ config, db }),
    logger: createLogger({ level: 'warn', name: 'bench-api' }),
  });
  const server = http.createServer(app.koa.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const workers: ChildProcess[] = [];
  return {
    info,
    env,
    config,
    db,
    temporal,
    apiUrl,
    dataDir,
    clusterPeaksMb: () =>
      Object.fromEntries((cluster?.nodes ?? []).filter((node) => node.pid() !== null).map((node) => [node.name, peakMemoryMb(node.pid()!)])),
    async startWorker(queues, extraEnv = {}) {
      const worker = await startEntryUntil({
        entry: 'workers/main.ts',
        argv: ['--queues', queues.join(',')],
        env: { ...env, MALLOC_ARENA_MAX: '2', LOG_LEVEL: 'info', API_INTERNAL_URL: apiUrl, ...extraEnv },
        says: 'workers running',
        what: `the ${queues.join(',')} worker`,
      });
      workers.push(worker);
      return worker;
    },
    async stop() {
      // A worker shuts down gracefully on SIGTERM, but one whose Temporal is gone may wait for it for good:
      // whatever has not exited within 10 s is killed, so that no bench leaves a worker behind.
      await Promise.all(workers.map((worker) => stopChild(worker, 10000)));
      server.close();
      app.close();
      await temporal.connection.close();
      await db.destroy();
      await cluster?.stop();
      await stopBenchTracing();
      await sayWhatJaegerHolds(jaeger);
      await jaeger?.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
      components.kill('SIGTERM');
    },
  };
}

/** The nearest-rank quantile of `values` (q from 0 to 1): the smallest value at least that share of them reach. */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

/** Every process's CPU time so far (user and system, in clock ticks) and its command line, read from /proc. */
export function processCpuTicks(): Map<number, { ticks: number; command: string }> {
  const found = new Map<number, { ticks: number; command: string }>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name is in parentheses and may hold spaces: the fields after it are counted from its end.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const command = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim() || stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      found.set(Number(entry), { ticks: Number(fields[11]) + Number(fields[12]), command });
    } catch {
      // The process ended meanwhile.
    }
  }
  return found;
}

/** The processes that used the most CPU between two readings of processCpuTicks, in seconds (100 ticks a second). */
export function cpuBetween(before: ReturnType<typeof processCpuTicks>, after: ReturnType<typeof processCpuTicks>, top = 8): string[] {
  return [...after]
    .map(([pid, { ticks, command }]) => ({ pid, seconds: (ticks - (before.get(pid)?.ticks ?? 0)) / 100, command }))
    .filter((row) => row.seconds > 0)
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, top)
    .map((row) => `${row.seconds.toFixed(1).padStart(6)} s  ${row.pid}  ${row.command.slice(0, 100)}`);
}

/** Runs a bench's `main` and exits: 0 once it is done (whatever still holds the event loop), 1 with its error printed. */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
