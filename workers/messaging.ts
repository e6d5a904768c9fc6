import { createMessagingActivities } from '../activities/messaging';
import { createOperationsActivities } from '../activities/operations';
import { TaskQueues } from '../domain/task-queues';
import { WorkerDeps } from './deps';

/** The `messaging` task queue: email sends, one by one and by role. */
export function messagingWorker(deps: WorkerDeps) {
  return { taskQueue: TaskQueues.messaging, activities: { ...createOperationsActivities(), ...createMessagingActivities(deps) } };
}
