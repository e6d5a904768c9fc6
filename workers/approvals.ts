import { createApprovalsActivities } from '../activities/approvals';
import { createOperationsActivities } from '../activities/operations';
import { TaskQueues } from '../domain/task-queues';
import { ensureRevisionRetentionSchedule } from '../temporal-config/schedules';
import { WorkerDeps } from './deps';

/** The `approvals` task queue: publish-with-approval, and the revision retention job, whose schedule it ensures at start. */
export function approvalsWorker(deps: WorkerDeps) {
  return {
    taskQueue: TaskQueues.approvals,
    activities: { ...createOperationsActivities(), ...createApprovalsActivities(deps) },
    onStart: () => ensureRevisionRetentionSchedule(deps.temporal.client, deps.config.content.revisionRetentionCron),
  };
}
