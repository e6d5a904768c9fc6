import { createOperationsActivities } from '../activities/operations';
import { TaskQueues } from '../temporal-config/task-queues';
import { WorkerDeps } from './deps';

/** The `archival` task queue: archive runs of the log tables. */
export function archivalWorker(_deps: WorkerDeps) {
  return { taskQueue: TaskQueues.archival, activities: { ...createOperationsActivities() } };
}
