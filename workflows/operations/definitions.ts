import { TaskQueue } from '../../domain/task-queues';

/** Everything the API and tests need to start the operations workflows; imports nothing heavy. */
export interface PingWorkerInput {
  taskQueue: TaskQueue;
}

export interface WorkerDescription {
  taskQueue: string;
  pid: number;
  hostname: string;
  activityTaskQueue: string;
  answeredAt: string;
}

export const pingWorkerId = (taskQueue: string, nonce: string) => `ping:${taskQueue}:${nonce}`;
