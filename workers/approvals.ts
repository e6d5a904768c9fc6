import { createApprovalsActivities } from '../activities/approvals';
import { createOperationsActivities } from '../activities/operations';
import { TaskQueues } from '../domain/task-queues';
import { WorkerDeps } from './deps';

/** The `approvals` task queue: publish-with-approval. */
export function approvalsWorker(deps: WorkerDeps) {
  return { taskQueue: TaskQueues.approvals, activities: { ...createOperationsActivities(), ...createApprovalsActivities(deps) } };
}
