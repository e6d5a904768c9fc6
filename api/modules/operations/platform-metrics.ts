import { Gauge, Registry } from 'prom-client';
import { temporal as proto } from '@temporalio/proto';
import { AppDeps } from '../../deps';
import { EVERY_TASK_QUEUE_KIND, QueueKind } from '../../../temporal-config/task-queue-kinds';
import { pingDatabase } from '../../../data/db';
import { sharedWhileFresh, within } from '../../../lib/within';
import { approvalsWaitingByAge, archivedOfLastDay, Counted, deploymentsOfLastHour, emailsOfLastHour, jobRunsOfLastDay } from '../../../data/platform-figures';

/** One reading serves every scrape for this long, so two Prometheus servers, or a short interval, cost one. */
const READING_MAX_AGE_MS = 10_000;
/**
 * How long one figure may take. A database or a Temporal that hangs makes its figures missing (and the
 * database down) well within Prometheus's 10 s scrape timeout, so the scrape still answers.
 */
const FIGURE_TIMEOUT_MS = 3000;

export interface QueueFigures {
  taskQueue: string;
  kind: QueueKind;
  pollers: number;
  backlog: number;
}

/** What one scrape reports. A figure that could not be read is null: its series are left out, not set to 0. */
export interface Reading {
  databaseUp: boolean;
  emails: Counted[] | null;
  deployments: Counted[] | null;
  jobRuns: Counted[] | null;
  approvalsWaiting: Counted[] | null;
  archived: { rows: Counted[]; bytes: Counted[] } | null;
  queues: QueueFigures[] | null;
}

type Deps = Pick<AppDeps, 'db' | 'temporal' | 'config'>;

/** Temporal's own view of each queue: how many pollers it has, and how many tasks wait on it. */
async function queueFigures(deps: Deps): Promise<QueueFigures[]> {
  const asks = EVERY_TASK_QUEUE_KIND.map(async ({ taskQueue, kind, taskQueueType }) => {
    const { connection } = deps.temporal;
    const described = await connection.withDeadline(Date.now() + FIGURE_TIMEOUT_MS, () =>
      connection.workflowService.describeTaskQueue({
        namespace: deps.config.temporal.namespace,
        taskQueue: { name: taskQueue, kind: proto.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        taskQueueType,
        reportStats: true,
      }),
    );
    return { taskQueue, kind, pollers: described.pollers?.length ?? 0, backlog: Number(described.stats?.approximateBacklogCount ?? 0) };
  });
  return Promise.all(asks);
}

async function read(deps: Deps): Promise<Reading> {
  const orNull = <T>(figure: Promise<T>) => within(figure, FIGURE_TIMEOUT_MS).catch(() => null);
  const [databaseUp, emails, deployments, jobRuns, approvalsWaiting, archived, queues] = await Promise.all([
    within(pingDatabase(deps.db), FIGURE_TIMEOUT_MS).then(
      () => true,
      () => false,
    ),
    orNull(emailsOfLastHour(deps.db)),
    orNull(deploymentsOfLastHour(deps.db)),
    orNull(jobRunsOfLastDay(deps.db)),
    orNull(approvalsWaitingByAge(deps.db)),
    orNull(archivedOfLastDay(deps.db)),
    orNull(queueFigures(deps)),
  ]);
  return { databaseUp, emails, deployments, jobRuns, approvalsWaiting, archived, queues };
}

/** The platform's figures, read at most once every READING_MAX_AGE_MS: the scrapes and the console's health screen share them. */
export type PlatformReading = () => Promise<Reading>;

export function platformReading(deps: Deps): PlatformReading {
  return sharedWhileFresh(READING_MAX_AGE_MS, () => read(deps));
}

/** Sets a gauge's series to the counts read, clearing those of the reading before. */
function setCounted(gauge: Gauge, counted: Counted[] | null): void {
  gauge.reset();
  for (const { labels, count } of counted ?? []) gauge.set(labels, count);
}

/**
 * The platform's own series on the API's /metrics (decision 044): read from the database and from Temporal
 * when Prometheus scrapes, at most once every READING_MAX_AGE_MS. Every label takes its values from a short
 * list: a status, a channel configuration, a job, an age band, a task queue.
 */
export function registerPlatformMetrics(registry: Registry, reading: PlatformReading): void {
  const gauge = (name: string, help: string, labelNames: string[], collect: (gauge: Gauge, now: Reading) => void) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        collect(this, await reading());
      },
    });
  gauge('opsflow_database_up', 'Whether the API could run a query when scraped (1) or not (0)', [], (it, now) => it.set(now.databaseUp ? 1 : 0));
  gauge(
    'opsflow_emails_last_hour',
    'Emails created in the last hour, by status and the channel configuration that took them',
    ['channel', 'status'],
    (it, now) => setCounted(it, now.emails),
  );
  gauge('opsflow_deployments_last_hour', 'Deployments that started or ended in the last hour, by status', ['status'], (it, now) =>
    setCounted(it, now.deployments),
  );
  gauge('opsflow_job_runs_last_day', 'Scheduled job runs of the last day, by job name and outcome', ['job_name', 'outcome'], (it, now) =>
    setCounted(it, now.jobRuns),
  );
  gauge('opsflow_approvals_waiting', 'Approval requests still waiting, by age band', ['age'], (it, now) => setCounted(it, now.approvalsWaiting));
  gauge('opsflow_archived_rows_last_day', 'Rows archive runs wrote to files in the last day, by log type', ['log_type'], (it, now) =>
    setCounted(it, now.archived?.rows ?? null),
  );
  gauge('opsflow_archived_bytes_last_day', 'Bytes of the files archive runs wrote in the last day, by log type', ['log_type'], (it, now) =>
    setCounted(it, now.archived?.bytes ?? null),
  );
  const perQueue = (it: Gauge, queues: QueueFigures[] | null, value: (queue: QueueFigures) => number) => {
    it.reset();
    for (const queue of queues ?? []) it.set({ task_queue: queue.taskQueue, kind: queue.kind }, value(queue));
  };
  gauge(
    'opsflow_task_queue_pollers',
    "Workers polling each task queue, as Temporal counts them, by the queue's kind of task",
    ['task_queue', 'kind'],
    (it, now) => perQueue(it, now.queues, (queue) => queue.pollers),
  );
  gauge('opsflow_task_queue_backlog', 'Tasks waiting on each task queue, as Temporal estimates them', ['task_queue', 'kind'], (it, now) =>
    perQueue(it, now.queues, (queue) => queue.backlog),
  );
}
