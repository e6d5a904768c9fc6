/** What a worker answers a ping with: which queue, which process, where, when (the operations workflows). */
export interface WorkerDescription {
  taskQueue: string;
  pid: number;
  hostname: string;
  activityTaskQueue: string;
  answeredAt: string;
}
