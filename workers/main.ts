// First: tracing patches `pg` and `http` as they load.
import { tracing, workerTracing } from './tracing';
import { DefaultLogger, LogLevel, Runtime, Worker } from '@temporalio/worker';
import { Config, ConfigError, loadConfig } from '../lib/config';
import { createLogger, Logger } from '../lib/logger';
import { createDb } from '../data/db';
import { assertAuditTablesMirror } from '../data/content/revisions';
import { createDocker } from '../adapters/docker';
import { connectPlatformTemporal } from '../temporal-config/client';
import { payloadCodecOf, platformDataConverter } from '../temporal-config/payload-codec';
import { ensureSearchAttributes } from '../temporal-config/search-attributes';
import { ALL_TASK_QUEUES, isTaskQueue, TaskQueue } from '../domain/task-queues';
import { archivalWorker } from './archival';
import { workflowSource } from './bundle';
import { connectPollers } from './connection';
import { WorkerDeps } from './deps';
import { approvalsWorker } from './approvals';
import { deploymentsWorker } from './deployments';
import { messagingWorker } from './messaging';

/** The SDK's default: as many activities as a deploy schedules at once (a step, its record, its neighbour). */
const EAGER_ACTIVITIES_PER_TASK = 3;

const WORKERS = {
  archival: archivalWorker,
  deployments: deploymentsWorker,
  messaging: messagingWorker,
  approvals: approvalsWorker,
} as const;

/** `--queues archival,messaging` or `WORKER_QUEUES`; all four by default. */
function queuesToRun(argv: string[], env: NodeJS.ProcessEnv): TaskQueue[] {
  const flag = argv.indexOf('--queues');
  const raw = flag >= 0 ? argv[flag + 1] : env.WORKER_QUEUES;
  if (!raw) return ALL_TASK_QUEUES;
  const queues = raw
    .split(',')
    .map((q) => q.trim())
    .filter(Boolean);
  const unknown = queues.filter((q) => !isTaskQueue(q));
  if (unknown.length > 0) throw new ConfigError('WORKER_QUEUES', `unknown task queue(s): ${unknown.join(', ')}`);
  return queues as TaskQueue[];
}

// The SDK's schedule-to-start buckets jump from 10 s to 100 s: the alert's 30 s bound needs edges of its own.
const SCHEDULE_TO_START_BUCKETS = [0.1, 0.5, 1, 5, 10, 30, 60, 100, 1000];

/**
 * The SDK's runtime: its log lines go to ours, and with WORKER_METRICS_PORT its metrics are served at
 * /metrics there (decision 044). Names follow Prometheus's rules: durations in seconds, counters ending in _total.
 */
function installRuntime(logger: Logger, metrics: Config['observability']['workerMetrics']): void {
  const level = (logger.level.toUpperCase() === 'DEBUG' ? 'DEBUG' : 'INFO') as LogLevel;
  const prometheus = metrics && {
    bindAddress: `${metrics.host}:${metrics.port}`,
    countersTotalSuffix: true,
    unitSuffix: true,
    useSecondsForDurations: true,
    // A name matches each histogram whose own name holds it: the workflow tasks' and the activities'.
    histogramBucketOverrides: { schedule_to_start_latency: SCHEDULE_TO_START_BUCKETS },
  };
  Runtime.install({
    ...(prometheus ? { telemetryOptions: { metrics: { prometheus } } } : {}),
    logger: new DefaultLogger(level, (entry) => {
      const fields = { ...(entry.meta ?? {}), sdk: true };
      if (entry.level === 'ERROR') logger.error(fields, entry.message);
      else if (entry.level === 'WARN') logger.warn(fields, entry.message);
      else if (entry.level === 'INFO') logger.info(fields, entry.message);
      else logger.debug(fields, entry.message);
    }),
  });
}

/** Runs one Temporal worker per requested task queue in this process until SIGINT or SIGTERM. */
async function main(): Promise<void> {
  let config;
  let queues: TaskQueue[];
  try {
    config = loadConfig();
    queues = queuesToRun(process.argv, process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`Invalid configuration: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger({ level: config.logLevel, name: `worker:${queues.join(',')}` });
  installRuntime(logger, config.observability.workerMetrics);
  const db = createDb({ databaseUrl: config.databaseUrl });
  // Activities write versioned rows too (publishing): a drifted audit table stops start-up.
  await assertAuditTablesMirror(db);
  const payloadCodec = payloadCodecOf(config);
  const temporal = await connectPlatformTemporal(config, `opsflow-worker:${queues.join(',')}`, payloadCodec);
  await ensureSearchAttributes(temporal.connection, config.temporal.namespace);
  // The pollers' connection carries the client's service token too, renewed well before it expires.
  const token = temporal.serviceToken;
  const connection = await connectPollers(config, token);
  const renewal = token
    ? setInterval(
        () => void connection.setApiKey(token()).catch((error: unknown) => logger.warn({ err: error }, 'could not renew the Temporal service token')),
        60000,
      )
    : null;
  const deps: WorkerDeps = {
    config,
    db,
    logger,
    temporal,
    docker: queues.includes('deployments') ? createDocker({ dockerHost: config.dockerHost }) : null,
  };
  const { workflowModules, ...source } = workflowSource(config.workflowBundlePath);
  const traces = workerTracing();
  const alongside: Array<{ stop(): Promise<void> }> = [];
  const workers = await Promise.all(
    queues.map(async (queue) => {
      const definition: {
        taskQueue: string;
        activities: object;
        eagerActivities?: boolean;
        onStart?: () => Promise<void>;
        alongside?: () => { stop(): Promise<void> };
      } = WORKERS[queue](deps);
      await definition.onStart?.();
      if (definition.alongside) alongside.push(definition.alongside());
      return Worker.create({
        connection,
        namespace: config.temporal.namespace,
        taskQueue: definition.taskQueue,
        activities: definition.activities,
        // No eager activities unless the queue asks: a workflow's activities go through the task queue to
        // whichever worker polls, so a run of many sites (or a bulk send) uses every worker of the queue, not
        // only the one that ran the workflow task (the two-worker archival test fails with eager dispatch on).
        // A deploy's steps run one after another, and each saves the task queue's round trip when taken eagerly.
        maxEagerActivityReservationsPerWorkflowTask: definition.eagerActivities ? EAGER_ACTIVITIES_PER_TASK : 0,
        dataConverter: platformDataConverter(payloadCodec),
        sinks: traces.sinks,
        interceptors: { workflowModules, activity: traces.activity },
        ...source,
      });
    }),
  );
  const metrics = config.observability.workerMetrics;
  logger.info({ queues, namespace: config.temporal.namespace, metrics: metrics && `http://${metrics.host}:${metrics.port}/metrics` }, 'workers running');
  try {
    await Promise.all(workers.map((worker) => worker.run()));
  } finally {
    await Promise.all(alongside.map((work) => work.stop()));
    if (renewal) clearInterval(renewal);
    await connection.close();
    await temporal.connection.close();
    await db.destroy();
    await tracing?.stop();
    logger.info('workers stopped');
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
