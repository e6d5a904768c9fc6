/** The platform's task queues, one worker each. The deployments worker is the only one that talks to Docker. */
import { check, firstProblem, Problem } from './workflow-input';

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

/** Why a worker ping's input is refused, or null. */
export const pingInputProblem = (input: unknown): Problem => firstProblem(input, (given) => [check.oneOf('taskQueue', given.taskQueue, ALL_TASK_QUEUES)]);
