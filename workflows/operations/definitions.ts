import { WorkerDescription } from '../../domain/operations';
import { TaskQueue } from '../../domain/task-queues';

/** Everything the API and tests need to start the operations workflows; imports nothing heavy. */
export interface PingWorkerInput {
  taskQueue: TaskQueue;
}

export type { WorkerDescription };

export const pingWorkerId = (taskQueue: string, nonce: string) => `ping:${taskQueue}:${nonce}`;
