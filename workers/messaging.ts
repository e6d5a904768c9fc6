import { createMessagingActivities } from '../activities/messaging';
import { createOperationsActivities } from '../activities/operations';
import { ensureStatusCallbackDispatcher } from '../temporal-config/dispatchers';
import { TaskQueues } from '../domain/task-queues';
import { WorkerDeps } from './deps';

/** The `messaging` task queue: email sends, one by one and by role, and the status callbacks' dispatcher, which it starts. */
export function messagingWorker(deps: WorkerDeps) {
  return {
    taskQueue: TaskQueues.messaging,
    activities: { ...createOperationsActivities(), ...createMessagingActivities(deps) },
    onStart: () => ensureStatusCallbackDispatcher(deps.temporal.client),
  };
}
