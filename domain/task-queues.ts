/** The platform's task queues, one worker each. The deployments worker is the only one that talks to Docker. */
export const TaskQueues = {
  archival: 'archival',
  deployments: 'deployments',
  messaging: 'messaging',
  approvals: 'approvals',
} as const;

export type TaskQueue = (typeof TaskQueues)[keyof typeof TaskQueues];

export const ALL_TASK_QUEUES: TaskQueue[] = Object.values(TaskQueues);

export function isTaskQueue(value: string): value is TaskQueue {
  return (ALL_TASK_QUEUES as string[]).includes(value);
}
