import { createArchivalActivities } from '../activities/archival';
import { createOperationsActivities } from '../activities/operations';
import { ensureArchiveSchedules } from '../temporal-config/schedules';
import { TaskQueues } from '../domain/task-queues';
import { WorkerDeps } from './deps';

/** The `archival` task queue: archive runs of the log tables; ensures their daily schedules at start. */
export function archivalWorker(deps: WorkerDeps) {
  return {
    taskQueue: TaskQueues.archival,
    activities: { ...createOperationsActivities(), ...createArchivalActivities({ db: deps.db, config: deps.config }) },
    onStart: () => ensureArchiveSchedules(deps.temporal.client, deps.config.archiveCron),
  };
}
