import { createOperationsActivities } from '../activities/operations';
import { TaskQueues } from '../temporal-config/task-queues';
import { WorkerDeps } from './deps';

/** The `approvals` task queue: publish-with-approval. */
export function approvalsWorker(_deps: WorkerDeps) {
  return { taskQueue: TaskQueues.approvals, activities: { ...createOperationsActivities() } };
}
