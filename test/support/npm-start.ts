import { ChildProcess, spawn } from 'node:child_process';
import { waitUntil } from './wait';
import { freePort } from './slots';

/** `npm start` as a terminal runs it: its process, everything it printed, and the development token of its banner. */
export interface NpmStarted {
  child: ChildProcess;
  output: () => string;
  token: string;
}

/** Runs `npm start` in `cwd`, in its own process group, until its ready banner; fails with its output otherwise. */
export async function npmStart(args: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; onSpawn?: (started: NpmStarted) => void }): Promise<NpmStarted> {
  const child = spawn('npm', ['start'], { cwd: args.cwd, env: args.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const started: NpmStarted = { child, output: () => output, token: '' };
  args.onSpawn?.(started);
  await waitUntil('the ready banner of npm start', () => output.includes('Ctrl-C stops everything'), {
    timeoutMs: args.timeoutMs,
    intervalMs: 250,
    abortIf: () => (child.exitCode !== null ? `npm start exited:\n${output}` : null),
  }).catch((error: Error) => {
    throw new Error(`${error.message}\n${output}`);
  });
  const token = /Development admin token[^\n]*\n\s+(\S+)/.exec(output)?.[1];
  if (!token) throw new Error(`no token in the banner:\n${output}`);
  started.token = token;
  return started;
}

/**
 * Ctrl-C: SIGINT to the whole process group, then waits for npm to exit; with `killAfterMs` (a clean-up,
 * not a test of the shutdown), what is left after that long is killed.
 */
export async function ctrlC(started: NpmStarted, options: { killAfterMs?: number } = {}): Promise<void> {
  if (started.child.exitCode !== null || started.child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => started.child.once('exit', () => resolve()));
  process.kill(-started.child.pid!, 'SIGINT');
  if (options.killAfterMs === undefined) return exited;
  const stopped = await Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), options.killAfterMs))]);
  if (!stopped) {
    process.kill(-started.child.pid!, 'SIGKILL');
    await exited;
  }
}

export interface NpmStartPorts {
  api: number;
  apiListen: number;
  edgeAdmin: number;
  pg: number;
  temporal: number;
  temporalUi: number;
  smtp: number;
  mailUi: number;
  /** The worker's Temporal SDK metrics (WORKER_METRICS_PORT). */
  workerMetrics: number;
  /** Jaeger's OTLP port and its API (JAEGER_OTLP_PORT, JAEGER_UI_PORT). */
  jaegerOtlp: number;
  jaegerUi: number;
  /** Prometheus (PROMETHEUS_PORT). */
  prometheus: number;
}

/**
 * The environment of an `npm start` of a test's own, beside the suite's components: its data folder, free
 * ports for every part, and its own Docker scope; NODE_ENV unset (npm start sets development itself) and
 * nothing of the suite's platform.
 */
export async function npmStartEnvironment(args: {
  dataDir: string;
  scope: string;
  extra?: NodeJS.ProcessEnv;
}): Promise<{ env: NodeJS.ProcessEnv; ports: NpmStartPorts }> {
  const [api, apiListen, edgeAdmin, pg, temporal, temporalUi, smtp, mailUi, workerMetrics, jaegerOtlp, jaegerUi, prometheus] = await Promise.all(
    Array.from({ length: 12 }, () => freePort()),
  );
  const ports = { api, apiListen, edgeAdmin, pg, temporal, temporalUi, smtp, mailUi, workerMetrics, jaegerOtlp, jaegerUi, prometheus };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: args.dataDir,
    API_PORT: String(api),
    API_LISTEN_PORT: String(apiListen),
    EDGE_ADMIN_URL: `http://127.0.0.1:${edgeAdmin}`,
    DATABASE_URL: `postgres://opsflow:opsflow@127.0.0.1:${pg}/opsflow`,
    TEMPORAL_ADDRESS: `127.0.0.1:${temporal}`,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_UI_URL: `http://127.0.0.1:${temporalUi}`,
    SMTP_CAPTURE_PORT: String(smtp),
    MAIL_CAPTURE_UI_PORT: String(mailUi),
    WORKER_METRICS_PORT: String(workerMetrics),
    JAEGER_OTLP_PORT: String(jaegerOtlp),
    JAEGER_UI_PORT: String(jaegerUi),
    PROMETHEUS_PORT: String(prometheus),
    DEPLOY_SCOPE: args.scope,
    DEPLOY_NETWORK: args.scope,
    ...args.extra,
  };
  delete env.NODE_ENV;
  delete env.WORKFLOW_BUNDLE_PATH;
  delete env.OPSFLOW_TEST_PLATFORM;
  return { env, ports };
}
