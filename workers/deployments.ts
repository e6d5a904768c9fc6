import { createDeployActivities, followSwarmTasks } from '../activities/deploy';
import { createOperationsActivities } from '../activities/operations';
import { runStatusOf } from '../temporal-config/client';
import { ensureCertificateRenewalSchedule, ensureReconcileSchedule } from '../temporal-config/schedules';
import { ensurePlatformCertificate } from './platform-certificate';
import { TaskQueues } from '../domain/task-queues';
import { WorkerDeps } from './deps';

/** With no ACME server, how often the renewal schedule looks for uploaded certificates that end soon. */
const UPLOAD_CHECK_SECONDS = 3600;

/**
 * The `deployments` task queue: deploys, scaling, undeploys and the reconcile of services; the only worker
 * that talks to Docker. Ensures the reconcile schedule and the certificate renewal schedule at start, and
 * with an ACME server a certificate for the platform's own hostname. Under the swarm driver it also follows the
 * swarm's task list for as long as it runs, so that the edge follows what the swarm does on its own (a
 * drained or lost node, a replaced task) within a second, not at the next reconcile.
 */
export function deploymentsWorker(deps: WorkerDeps) {
  if (!deps.docker) throw new Error('the deployments worker needs the Docker engine');
  const { config, logger } = deps;
  const deployDeps = { db: deps.db, docker: deps.docker.docker, config, runStatusOf: runStatusOf(deps.temporal) };
  return {
    taskQueue: TaskQueues.deployments,
    // A deploy's activities run in the worker that scheduled them, without a trip through the task queue
    // each: a deploy is a chain of short steps, not a fan-out to spread over the queue's workers.
    eagerActivities: true,
    activities: {
      ...createOperationsActivities(),
      ...createDeployActivities(deployDeps),
    },
    alongside:
      config.deploy.driver === 'swarm'
        ? () =>
            followSwarmTasks(deployDeps, (error) =>
              logger.warn({ reason: (error as Error).message }, "following the swarm's tasks failed; retrying twice a second"),
            )
        : undefined,
    onStart: async () => {
      await ensureReconcileSchedule(deps.temporal.client, {
        everySeconds: config.deploy.reconcileSeconds,
        healthTimeoutSeconds: config.deploy.healthTimeoutSeconds,
        drainSeconds: config.deploy.drainSeconds,
      });
      // Kept with no ACME server too: uploaded certificates end, and their owners are told in time.
      await ensureCertificateRenewalSchedule(deps.temporal.client, {
        everySeconds: config.edge.acme?.renewalCheckSeconds ?? UPLOAD_CHECK_SECONDS,
        retryAfterSeconds: config.edge.acme?.retryAfterSeconds ?? UPLOAD_CHECK_SECONDS,
        acme: config.edge.acme !== null,
      });
      if (config.edge.acme) await ensurePlatformCertificate(deps);
    },
  };
}
