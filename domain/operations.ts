/** What a worker answers a ping with: which queue, which process, where, when (the operations workflows). */
export interface WorkerDescription {
  taskQueue: string;
  pid: number;
  hostname: string;
  activityTaskQueue: string;
  answeredAt: string;
  /** The priority and fairness key the activity was dispatched with, inherited from its run (decision 046). */
  fairShare?: { priorityKey: number | null; fairnessKey: string | null };
}
