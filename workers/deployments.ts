import { createDeployActivities } from '../activities/deploy';
import { createOperationsActivities } from '../activities/operations';
import { runStatusOf } from '../temporal-config/client';
import { ensureReconcileSchedule } from '../temporal-config/schedules';
import { TaskQueues } from '../domain/task-queues';
import { WorkerDeps } from './deps';

/**
 * The `deployments` task queue: deploys, scaling, undeploys and the reconcile of services; the only worker
 * that talks to Docker. Ensures the reconcile schedule at start.
 */
export function deploymentsWorker(deps: WorkerDeps) {
  if (!deps.docker) throw new Error('the deployments worker needs the Docker engine');
  const { config } = deps;
  return {
    taskQueue: TaskQueues.deployments,
    activities: {
      ...createOperationsActivities(),
      ...createDeployActivities({ db: deps.db, docker: deps.docker.docker, config, runStatusOf: runStatusOf(deps.temporal) }),
    },
    onStart: () =>
      ensureReconcileSchedule(deps.temporal.client, {
        everySeconds: config.deployReconcileSeconds,
        healthTimeoutSeconds: config.deployHealthTimeoutSeconds,
        drainSeconds: config.deployDrainSeconds,
      }),
  };
}
