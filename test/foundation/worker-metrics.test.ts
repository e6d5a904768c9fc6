import fs from 'node:fs';
import path from 'node:path';
import { pingWorker } from '../../workflows/operations/ping-worker';
import { pingWorkerId } from '../../workflows/operations/definitions';
import { TaskQueue } from '../../domain/task-queues';
import { attachPlatform, TestPlatform } from '../support/platform';
import { freePort } from '../support/slots';

/**
 * A worker with WORKER_METRICS_PORT serves the Temporal SDK's metrics as Prometheus text (decision 044).
 * Scraped while it runs, they hold the schedule-to-start and execution series of each queue it worked on.
 */
let platform: TestPlatform;
let metricsUrl: string;
const QUEUES: TaskQueue[] = ['approvals', 'messaging'];

beforeAll(async () => {
  platform = await attachPlatform();
  const port = await freePort();
  metricsUrl = `http://127.0.0.1:${port}/metrics`;
  await platform.startWorker(QUEUES, { WORKER_METRICS_PORT: String(port) });
});

afterAll(async () => {
  await platform?.close();
});

/** The label sets of one series in Prometheus text: each line's part between the braces. */
function labelsOf(text: string, series: string): string[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${series}{`))
    .map((line) => line.slice(series.length + 1, line.indexOf('}')));
}

test("a worker's own /metrics holds schedule-to-start and execution series for each queue it ran activities on", async () => {
  for (const queue of QUEUES) {
    await platform.temporal.client.workflow.execute(pingWorker, {
      taskQueue: queue,
      workflowId: pingWorkerId(queue, `metrics-${Date.now()}`),
      args: [{ taskQueue: queue }],
    });
  }
  const answer = await fetch(metricsUrl);
  expect(answer.status).toBe(200);
  const text = await answer.text();
  for (const queue of QUEUES) {
    const ofQueue = (series: string) => labelsOf(text, series).filter((labels) => labels.includes(`task_queue="${queue}"`));
    expect({ queue, scheduleToStart: ofQueue('temporal_activity_schedule_to_start_latency_seconds_bucket').length > 0 }).toEqual({
      queue,
      scheduleToStart: true,
    });
    expect({ queue, execution: ofQueue('temporal_activity_execution_latency_seconds_bucket').length > 0 }).toEqual({ queue, execution: true });
    // The alert's bound of 30 s is an edge of the histogram, not a guess inside the SDK's 10 s to 100 s bucket.
    expect({ queue, edgeAt30s: ofQueue('temporal_activity_schedule_to_start_latency_seconds_bucket').some((labels) => labels.includes('le="30"')) }).toEqual({
      queue,
      edgeAt30s: true,
    });
    expect({ queue, workflowTasks: ofQueue('temporal_workflow_task_schedule_to_start_latency_seconds_bucket').length > 0 }).toEqual({
      queue,
      workflowTasks: true,
    });
  }
});

test('no label of the worker metrics holds a user, an address or a run: the label names are the SDK’s bounded set', async () => {
  const text = await (await fetch(metricsUrl)).text();
  const names = new Set(
    text
      .split('\n')
      .filter((line) => line.startsWith('temporal_') && line.includes('{'))
      .flatMap((line) => [...line.slice(line.indexOf('{') + 1, line.indexOf('}')).matchAll(/([a-z_]+)="/g)].map((match) => match[1])),
  );
  const bounded = [
    'namespace',
    'task_queue',
    'workflow_type',
    'activity_type',
    'poller_type',
    'worker_type',
    'service_name',
    'le',
    'eager',
    'failure_reason',
    'status',
    'operation',
  ];
  expect([...names].filter((name) => !bounded.includes(name))).toEqual([]);
});

/** The series a dashboard's queries read, by name (a histogram's by its `_bucket`). */
function seriesReadBy(dashboard: string, prefix: string): string[] {
  const json = fs.readFileSync(path.join(__dirname, '..', '..', 'monitoring', 'grafana', dashboard), 'utf8');
  return [...new Set([...json.matchAll(new RegExp(`\\b${prefix}[a-z_]+`, 'g'))].map((match) => match[0]))].sort();
}

/** Counters the SDK creates at their first count: this test's runs fail nothing, so they are not served yet. */
const FIRST_SEEN_ON_A_FAILURE = [
  'temporal_activity_execution_failed_total',
  'temporal_request_failure_total',
  'temporal_workflow_failed_total',
  'temporal_workflow_task_execution_failed_total',
];

test("every series the workers' dashboard reads is one a worker serves (the failure counters once something has failed)", async () => {
  const text = await (await fetch(metricsUrl)).text();
  const served = new Set(
    text
      .split('\n')
      .filter((line) => line.startsWith('temporal_'))
      .map((line) => line.split(/[{ ]/)[0]),
  );
  const read = seriesReadBy('temporal-workers.json', 'temporal_');
  expect(read.length).toBeGreaterThan(10);
  expect(read.filter((name) => !served.has(name) && !FIRST_SEEN_ON_A_FAILURE.includes(name))).toEqual([]);
});
