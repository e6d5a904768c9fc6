import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createApp } from '../../api/app';
import { AppDeps } from '../../api/deps';
import { signToken, TokenClaims } from '../../api/http/sign-token';
import { Config, loadConfig } from '../../lib/config';
import { secretKeysOf } from '../../lib/secrets';
import { createLogger } from '../../lib/logger';
import { createDb, Db } from '../../data/db';
import { createDocker, DockerHandle } from '../../adapters/docker';
import { platformStorage } from '../../api/storage';
import { registerCoreServices } from '../../data/deploy/registry';
import { assertAuditTablesMirror } from '../../data/content/revisions';
import { connectPlatformTemporal, TemporalHandle } from '../../temporal-config/client';
import { TaskQueue } from '../../domain/task-queues';
import { typescriptCommand } from '../../scripts/platform/children';
import { RunningEdge, startEdge } from '../../scripts/platform/edge';
import { edgeSettingsOf, startEdgeControlPlane } from '../../edge/control-plane';
import { registryForEdge } from '../../data/deploy/registry-changes';
import { removeScopedDockerObjects } from './docker-cleanup';
import { waitUntil } from './wait';
import { deployScopeOf, freePort, slotDatabase, slotNamespace, TEMPLATE_DATABASE, TestPlatformInfo, TEST_BASE_IMAGE } from './slots';

const ROOT = path.resolve(__dirname, '..', '..');

/** A TypeScript entry point of the project as a child process, its output kept. */
function spawnEntryKept(entry: string, argv: string[], env: NodeJS.ProcessEnv) {
  const [command, commandArgv] = typescriptCommand(entry, argv);
  const child = spawn(command, commandArgv, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const done = () => child.exitCode !== null || child.signalCode !== null;
  /** Sends `signal` unless the child has ended, and answers once it has. */
  const end = async (signal: NodeJS.Signals) => {
    if (!done()) child.kill(signal);
    await exited;
  };
  return { child, output: () => output, done, end };
}

export interface RunningApi {
  /** Where tests call it: the platform's edge (Envoy) for the API behind it, the API itself for any other. */
  url: string;
  close(): Promise<void>;
}

export interface RunningApiProcess extends RunningApi {
  /** SIGKILL: the API dies at once; the edge keeps routing from the files it last wrote. */
  kill(): Promise<void>;
  output(): string;
}

export interface RunningWorker {
  child: ChildProcess;
  /** SIGKILL: the process dies at once, mid-activity if it is in one. */
  kill(): Promise<void>;
  stop(): Promise<void>;
  output(): string;
}

/** One test file's own platform: its own database (a copy of the migrated template) and Temporal namespace. */
export interface TestPlatform {
  info: TestPlatformInfo;
  config: Config;
  env: NodeJS.ProcessEnv;
  db: Db;
  temporal: TemporalHandle;
  docker: DockerHandle;
  deps: AppDeps;
  /**
   * Starts an API in this process. The first one (and the next, once it has closed) sits behind the
   * platform's edge, a real Envoy on API_PORT, and is its control plane, as in production; an API started
   * beside it (another configuration, say) answers directly.
   */
  startApi(overrides?: Partial<AppDeps>): Promise<RunningApi>;
  /**
   * Starts the API as its own process (api/server.ts, as production runs it) behind the platform's edge,
   * as its control plane; it can be killed and started again while the edge keeps serving.
   */
  startApiProcess(): Promise<RunningApiProcess>;
  /** The platform's edge, once an API has started it. */
  edge(): RunningEdge | null;
  startWorker(queues: TaskQueue[], extraEnv?: NodeJS.ProcessEnv): Promise<RunningWorker>;
  /** The workers this platform started that are still alive. */
  runningWorkers(): RunningWorker[];
  token(claims: TokenClaims): Promise<string>;
  close(): Promise<void>;
}

function readInfo(): TestPlatformInfo {
  const file = process.env.OPSFLOW_TEST_PLATFORM;
  if (!file || !fs.existsSync(file)) {
    throw new Error('The shared test platform is not running: run the suite with `npm test` (jest global setup starts it).');
  }
  return JSON.parse(fs.readFileSync(file, 'utf8')) as TestPlatformInfo;
}

/**
 * The swarm driver's settings (DEPLOY_DRIVER=swarm, from the file's env or the run's): the platform's
 * registry, and the door through which the edge on the host reaches the services' overlays.
 */
function swarmSettings(info: TestPlatformInfo): NodeJS.ProcessEnv {
  if ('error' in info.swarm) throw new Error(`The swarm driver's tests cannot run: ${info.swarm.error}`);
  return { DEPLOY_REGISTRY: info.swarm.registry, DEPLOY_ATTACH_CONTAINERS: info.swarm.door };
}

/** The shared PostgreSQL's administrator URL: for a component of a test's own (a Temporal cluster) to keep its databases on. */
export function sharedPostgresAdminUrl(): string {
  return readInfo().postgres.adminUrl;
}

async function claimSlot(info: TestPlatformInfo): Promise<number> {
  const admin = new pg.Client({ connectionString: info.postgres.adminUrl });
  try {
    await admin.connect();
  } catch (error) {
    throw new Error(`PostgreSQL of the test platform is unreachable: ${error instanceof Error ? error.message : error}`, { cause: error });
  }
  try {
    const { rows } = await admin.query<{ slot: string }>("select nextval('opsflow_test_slot') as slot");
    const slot = Number(rows[0].slot);
    if (slot > info.slots) throw new Error(`More test files than the ${info.slots} namespaces of the test platform; raise TEST_SLOTS.`);
    await admin.query(`create database ${slotDatabase(slot)} template ${TEMPLATE_DATABASE}`);
    return slot;
  } finally {
    await admin.end();
  }
}

/** Attaches a test file to the shared components, with a clean database and namespace of its own. */
export async function attachPlatform(args: { env?: NodeJS.ProcessEnv } = {}): Promise<TestPlatform> {
  const info = readInfo();
  const slot = await claimSlot(info);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `opsflow-${slotNamespace(slot)}-`));
  const edgeDir = path.join(dataDir, 'edge');
  const edgeAdminPort = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: `${info.postgres.urlPrefix}${slotDatabase(slot)}`,
    TEMPORAL_ADDRESS: info.temporal.address,
    TEMPORAL_NAMESPACE: slotNamespace(slot),
    TEMPORAL_UI_URL: info.temporal.uiUrl,
    SMTP_CAPTURE_PORT: String(info.mail.smtpPort),
    MAIL_CAPTURE_UI_PORT: String(info.mail.uiPort),
    DATA_DIR: dataDir,
    WORKFLOW_BUNDLE_PATH: info.workflowBundlePath,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    // Never fires during a run; the schedule test sets its own.
    ARCHIVE_CRON: '0 3 1 1 *',
    // Deploys: the JRE base image the suite's global setup builds, and containers and images labelled with this file's scope.
    DEPLOY_BASE_IMAGE: TEST_BASE_IMAGE,
    DEPLOY_SCOPE: deployScopeOf(slot),
    // Each service's network is `{DEPLOY_NETWORK}-{service}`: per file, so that files deploying a same-named service do not share one.
    DEPLOY_NETWORK: deployScopeOf(slot),
    DEPLOY_DRAIN_SECONDS: '1',
    DEPLOY_HEALTH_TIMEOUT_SECONDS: '60',
    // The reconcile test triggers the schedule itself.
    DEPLOY_RECONCILE_SECONDS: '86400',
    // Tests send far more than an operator would; the rate-limit test sets the limit it checks.
    SEND_RATE_LIMIT: '100000',
    // The edge: Envoy on API_PORT in front of the API, its admin where the deploy runs confirm their routing.
    API_PORT: String(await freePort()),
    EDGE_DIR: edgeDir,
    EDGE_ADMIN_URL: `http://127.0.0.1:${edgeAdminPort}`,
    ...args.env,
  };
  if (env.DEPLOY_DRIVER === 'swarm') Object.assign(env, swarmSettings(info));
  const config = loadConfig(env);
  const logger = createLogger({ level: config.logLevel, name: 'test' });
  const db = createDb({ databaseUrl: config.databaseUrl });
  let temporal: TemporalHandle;
  try {
    temporal = await connectPlatformTemporal(config, 'opsflow-test');
  } catch (error) {
    throw new Error(`Temporal of the test platform is unreachable at ${config.temporal.address}: ${error}`, { cause: error });
  }
  const docker = createDocker({ dockerHost: config.dockerHost });
  const stores = platformStorage({ config, db });
  const deps: AppDeps = { config, db, temporal, docker, storage: stores.storage, archives: stores.archives, logger };
  const apis: RunningApi[] = [];
  // Every answer outside its route's declared contract (code, status, schema); close() fails the test file on any.
  const breaches = new Set<string>();
  const workers: RunningWorker[] = [];
  let edge: RunningEdge | null = null;
  let edgeOwner: RunningApi | null = null;
  const edgeUrl = `http://127.0.0.1:${config.api.port}`;
  /** Starts the edge once; answers when it reaches the API now behind it (a new owner re-points its API cluster). */
  const edgeInFront = async () => {
    edge ??= await startEdge({ dir: edgeDir, adminPort: edgeAdminPort });
    // What the last try met, for the error: once (CI-18) the edge was ready and /healthz through it never
    // answered 200 within 10 s, and nothing said why.
    let lastAnswer = 'no answer yet';
    await waitUntil(
      'the edge to reach the API',
      () =>
        fetch(`${edgeUrl}/healthz`).then(
          async (answer) => {
            lastAnswer = `${answer.status} ${(await answer.text()).slice(0, 200)}`;
            return answer.ok;
          },
          (error: Error) => {
            lastAnswer = `${error.message} ${String((error.cause as Error | undefined)?.message ?? '')}`;
            return false;
          },
        ),
      { timeoutMs: 10000, intervalMs: 50 },
    ).catch(async (error: Error) => {
      const listeners = await fetch(`http://127.0.0.1:${edgeAdminPort}/listeners?format=json`).then((answer) => answer.text(), String);
      throw new Error(
        `${error.message} at ${edgeUrl}: it last answered ${lastAnswer}; Envoy's listeners: ${listeners.slice(0, 500)}; its output: ${edge?.output().slice(-1500)}`,
      );
    });
  };

  const startApi = async (overrides: Partial<AppDeps> = {}): Promise<RunningApi> => {
    // As api/server.ts does at start-up.
    await assertAuditTablesMirror(db);
    await registerCoreServices(db);
    const app = createApp(
      { ...deps, ...overrides },
      {
        onContractBreach: ({ route, breach }) => {
          breaches.add(`${route}: ${breach}`);
          if (process.env.RECORD_BREACHES) fs.appendFileSync(process.env.RECORD_BREACHES, `${route}\t${breach}\n`);
        },
      },
    );
    const server = http.createServer(app.koa.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const config = overrides.config ?? deps.config;
    const controlPlane = edgeOwner
      ? null
      : startEdgeControlPlane({
          registry: registryForEdge(overrides.db ?? db, config.databaseUrl, secretKeysOf(config)),
          config,
          logger,
          edge: { ...edgeSettingsOf(config, edgeDir), api: { host: '127.0.0.1', port } },
        });
    let closed = false;
    const api: RunningApi = {
      url: controlPlane ? edgeUrl : `http://127.0.0.1:${port}`,
      close: async () => {
        if (closed) return;
        closed = true;
        if (controlPlane) {
          await controlPlane.close();
          edgeOwner = null;
        }
        await new Promise<void>((resolve) => {
          app.close();
          server.closeAllConnections();
          server.close(() => resolve());
        });
      },
    };
    if (controlPlane) {
      edgeOwner = api;
      await controlPlane.ready;
      await edgeInFront();
    }
    apis.push(api);
    return api;
  };

  const startApiProcess = async (): Promise<RunningApiProcess> => {
    if (edgeOwner) throw new Error('An API of this platform is already behind its edge.');
    const listenPort = await freePort();
    const server = spawnEntryKept('api/server.ts', [], { ...env, API_LISTEN_PORT: String(listenPort), EDGE_API_ADDRESS: `127.0.0.1:${listenPort}` });
    const ending = async (signal: NodeJS.Signals) => {
      await server.end(signal);
      if (edgeOwner === api) edgeOwner = null;
    };
    const api: RunningApiProcess = { url: edgeUrl, output: server.output, kill: () => ending('SIGKILL'), close: () => ending('SIGTERM') };
    edgeOwner = api;
    apis.push(api);
    await waitUntil(
      'the API process to listen',
      () =>
        fetch(`http://127.0.0.1:${listenPort}/healthz`).then(
          (answer) => answer.ok,
          () => false,
        ),
      {
        timeoutMs: 60000,
        intervalMs: 100,
        abortIf: () => (server.done() ? `the API process exited at start:\n${server.output()}` : null),
      },
    );
    await edgeInFront();
    return api;
  };

  const startWorker = async (queues: TaskQueue[], extraEnv: NodeJS.ProcessEnv = {}): Promise<RunningWorker> => {
    const { child, output, end } = spawnEntryKept('workers/main.ts', ['--queues', queues.join(',')], {
      ...env,
      MALLOC_ARENA_MAX: '2',
      LOG_LEVEL: 'info',
      ...extraEnv,
    });
    await waitUntil(`worker (${queues.join(',')}) to start`, () => output().includes('workers running'), {
      timeoutMs: 60000,
      intervalMs: 100,
      abortIf: () => (child.exitCode !== null ? `worker (${queues.join(',')}) exited at start:\n${output()}` : null),
    }).catch((error: Error) => {
      child.kill('SIGKILL');
      throw new Error(`${error.message}\n${output()}`);
    });
    const worker: RunningWorker = {
      child,
      kill: () => end('SIGKILL'),
      stop: async () => {
        const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
        await end('SIGTERM');
        clearTimeout(timer);
      },
      output,
    };
    workers.push(worker);
    return worker;
  };

  return {
    info,
    config,
    env,
    db,
    temporal,
    docker,
    deps,
    startApi,
    startApiProcess,
    edge: () => edge,
    startWorker,
    runningWorkers: () => workers.filter((worker) => worker.child.exitCode === null && worker.child.signalCode === null),
    token: (claims) => signToken({ secret: config.identity.jwtSecret, claims }),
    close: async () => {
      await Promise.all(workers.map((worker) => worker.stop()));
      await Promise.all(apis.map((api) => api.close()));
      await edge?.stop();
      stores.close();
      await temporal.connection.close();
      await db.destroy();
      if (await docker.ping()) await removeScopedDockerObjects(docker.docker, config.deploy.scope);
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (breaches.size > 0 && !process.env.RECORD_BREACHES) {
        throw new Error(`Answers outside their route's declared contract (declare the code, status or schema):\n${[...breaches].join('\n')}`);
      }
    },
  };
}

/** A test file's platform and the API it started, filled in by the file's first `beforeAll`. */
export interface FilePlatform {
  readonly platform: TestPlatform;
  readonly api: RunningApi;
  /** Closes the file's API and starts another behind the edge, which `api` then is (an API restart). */
  restartApi(): Promise<RunningApi>;
}

/**
 * The preamble of a test file that talks to the API: attaches it to the shared components and starts its
 * API behind the edge before its tests (a `beforeAll` registered first, so the file's own hooks can use
 * it), and closes both after them; `apiDeps` replaces parts of the API's (its logger, its configuration).
 * Read the fields inside hooks and tests, not at the file's top level.
 */
export function platformWithApi(args: { env?: NodeJS.ProcessEnv; apiDeps?: (platform: TestPlatform) => Partial<AppDeps> } = {}): FilePlatform {
  const held: { platform?: TestPlatform; api?: RunningApi } = {};
  beforeAll(async () => {
    held.platform = await attachPlatform({ env: args.env });
    held.api = await held.platform.startApi(args.apiDeps?.(held.platform));
  });
  afterAll(async () => {
    await held.platform?.close();
  });
  return {
    get platform() {
      if (!held.platform) throw new Error('the platform is attached in beforeAll: read it inside a hook or a test');
      return held.platform;
    },
    get api() {
      if (!held.api) throw new Error('the API is started in beforeAll: read it inside a hook or a test');
      return held.api;
    },
    async restartApi() {
      await this.api.close();
      held.api = await this.platform.startApi();
      return held.api;
    },
  };
}
