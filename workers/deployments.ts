import { createOperationsActivities } from '../activities/operations';
import { TaskQueues } from '../temporal-config/task-queues';
import { WorkerDeps } from './deps';

/** The `deployments` task queue: deploys, scaling and undeploys of services (the only worker that talks to Docker). */
export function deploymentsWorker(_deps: WorkerDeps) {
  return { taskQueue: TaskQueues.deployments, activities: { ...createOperationsActivities() } };
}
