import { pingWorker } from '../../workflows/operations/ping-worker';
import { pingWorkerId } from '../../workflows/operations/definitions';
import { startWorkflow, workflowUiUrl } from '../../temporal-config/client';
import { ALL_TASK_QUEUES } from '../../domain/task-queues';
import { attachPlatform, RunningWorker, TestPlatform } from '../support/platform';
import { recordHistory } from '../support/histories';
import { fairShareOf, PRIORITY } from '../../domain/fairness';

let platform: TestPlatform;
const workers = new Map<string, RunningWorker>();

beforeAll(async () => {
  platform = await attachPlatform();
  const started = await Promise.all(ALL_TASK_QUEUES.map((queue) => platform.startWorker([queue])));
  ALL_TASK_QUEUES.forEach((queue, i) => workers.set(queue, started[i]));
});

afterAll(async () => {
  await platform?.close();
});

describe.each(ALL_TASK_QUEUES)('the %s worker', (queue) => {
  test("runs a workflow started on its queue through the platform client helper; its activity inherits the run's fair share", async () => {
    const started = await startWorkflow(platform.temporal, pingWorker, {
      taskQueue: queue,
      workflowId: pingWorkerId(queue, `${Date.now()}`),
      args: [{ taskQueue: queue }],
      priority: fairShareOf('workerCheck', `site-of-${queue}`),
    });
    expect(started.uiUrl).toBe(workflowUiUrl(platform.temporal, started.workflowId, started.runId));
    expect(started.uiUrl.startsWith(`${platform.config.temporal.uiUrl}/namespaces/${platform.config.temporal.namespace}/workflows/`)).toBe(true);

    const result = await platform.temporal.client.workflow.getHandle(started.workflowId, started.runId).result();
    if (queue === 'archival') await recordHistory(platform.temporal, { workflowId: started.workflowId, runId: started.runId, name: 'ping-worker' });

    expect(result).toEqual(expect.objectContaining({ taskQueue: queue, activityTaskQueue: queue, pid: expect.any(Number) }));
    // The activity was started with no priority of its own: it carries its run's.
    expect(result.fairShare).toEqual({ priorityKey: PRIORITY.normal, fairnessKey: `site-of-${queue}` });
    expect(result.pid).not.toBe(process.pid);
  });
});

test('starting a workflow under an id that is already running answers 409 with the given code', async () => {
  await workers.get('archival')!.stop();
  const workflowId = pingWorkerId('archival', `dup-${Date.now()}`);
  await startWorkflow(platform.temporal, pingWorker, {
    taskQueue: 'archival',
    workflowId,
    args: [{ taskQueue: 'archival' }],
    priority: fairShareOf('workerCheck'),
  });

  await expect(
    startWorkflow(platform.temporal, pingWorker, {
      taskQueue: 'archival',
      workflowId,
      args: [{ taskQueue: 'archival' }],
      priority: fairShareOf('workerCheck'),
      alreadyRunningCode: 'ARCHIVE_RUN_IN_PROGRESS',
    }),
  ).rejects.toMatchObject({ status: 409, code: 'ARCHIVE_RUN_IN_PROGRESS' });
  await platform.temporal.client.workflow.getHandle(workflowId).terminate('test done');
});
