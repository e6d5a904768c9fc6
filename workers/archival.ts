import { createArchivalActivities } from '../activities/archival';
import { createOperationsActivities } from '../activities/operations';
import { ensureArchiveSchedules } from '../temporal-config/schedules';
import { TaskQueues } from '../domain/task-queues';
import { LOG_TYPES } from '../domain/archival';
import { WorkerDeps } from './deps';

/**
 * The `archival` task queue: archive runs of the log tables. At start it ensures their daily schedules and
 * the log tables' month partitions ahead (the schedule keeps them so; a platform started the day before a
 * month turns does not wait for it).
 */
export function archivalWorker(deps: WorkerDeps) {
  const activities = createArchivalActivities({ db: deps.db, config: deps.config });
  return {
    taskQueue: TaskQueues.archival,
    activities: { ...createOperationsActivities(), ...activities },
    onStart: async () => {
      for (const logType of LOG_TYPES) await activities.createPartitionsAhead({ logType });
      await ensureArchiveSchedules(deps.temporal.client, deps.config.archive.cron);
    },
  };
}
