import { createOperationsActivities } from '../activities/operations';
import { TaskQueues } from '../temporal-config/task-queues';
import { WorkerDeps } from './deps';

/** The `messaging` task queue: email and SMS sends. */
export function messagingWorker(_deps: WorkerDeps) {
  return { taskQueue: TaskQueues.messaging, activities: { ...createOperationsActivities() } };
}
