import * as wf from '@temporalio/workflow';
import type { OperationsActivities } from '../../activities/operations';
import { PingWorkerInput, WorkerDescription } from './definitions';
import { pingInputProblem } from '../../domain/task-queues';
import { refuseInvalidInput } from '../valid-input';

// Never handed back with the workflow task's answer (the deployments worker takes eager activities): a ping
// proves the activity queue itself, where a task waits with its run's priority and fairness key.
const { describeWorker } = wf.proxyActivities<OperationsActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3 },
  allowEagerDispatch: false,
});

/**
 * Proves a task queue has a live worker: the workflow task and its activity both run on that queue, and the
 * worker answers who it is. Operators run it from the Web UI or `temporal workflow start` to check a queue.
 */
export async function pingWorker(input: PingWorkerInput): Promise<WorkerDescription> {
  refuseInvalidInput(pingInputProblem(input));
  return describeWorker({ taskQueue: input.taskQueue });
}
