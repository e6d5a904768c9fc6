import { syncTaskInstances, TaskInstance } from '../../../data/deploy/instances';
import { canarySwarmServiceName, LABELS, swarmServiceName } from '../../../data/deploy/labels';
import { DeployDeps } from '../deps';
import { serviceNetworkName } from '../service-network';
import { RoutableTask, routableTasks, SwarmTask, taskEvents, tasksOf } from './tasks';
import { recordServiceEvents } from '../../../data/deploy/events';
import { ServiceEvent } from '../../../domain/deploy';
import { isGone } from '../docker-errors';

/** A deployed service's swarm service, its canary rollout's (while one runs), and its overlay, as the platform names them. */
export const names = (deps: Pick<DeployDeps, 'config'>, serviceName: string) => ({
  swarmService: swarmServiceName({ scope: deps.config.deploy.scope, serviceName }),
  canaryService: canarySwarmServiceName({ scope: deps.config.deploy.scope, serviceName }),
  network: serviceNetworkName({ network: deps.config.deploy.network, serviceName }),
});

const routableOf = (deps: DeployDeps, serviceName: string, tasks: SwarmTask[]) => routableTasks(tasks, { network: names(deps, serviceName).network });

async function syncRoutable(deps: DeployDeps, serviceName: string, routable: RoutableTask[]): Promise<{ serving: TaskInstance[]; left: string[] }> {
  const { left } = await syncTaskInstances(deps.db, { serviceName, running: routable.map((task) => task.instance) });
  return { serving: routable.filter((task) => task.healthy).map((task) => task.instance), left };
}

/**
 * Makes the registry's rows match what the swarm reports for the service: the tasks of its swarm service and of its
 * canary's, one set of instances (the edge tells the versions apart by their deployment). Answers the tasks
 * that passed their health check.
 */
export async function syncService(deps: DeployDeps, serviceName: string): Promise<{ tasks: SwarmTask[]; serving: TaskInstance[]; left: string[] }> {
  const { swarmService, canaryService } = names(deps, serviceName);
  const tasks = [...(await tasksOf(deps.docker, swarmService)), ...(await tasksOf(deps.docker, canaryService))];
  return { tasks, ...(await syncRoutable(deps, serviceName, routableOf(deps, serviceName, tasks))) };
}

/** Whether the engine says the kernel killed the task's container for memory (false once the container is gone). */
async function killedForMemory(deps: DeployDeps, containerId: string): Promise<boolean> {
  try {
    return Boolean((await deps.docker.getContainer(containerId).inspect()).State.OOMKilled);
  } catch (error) {
    if (isGone(error)) return false;
    throw error;
  }
}

/** How often the registry catches up with the swarm's task list: the edge lets go of a stopping task within about this. */
const FOLLOW_EVERY_MS = 500;
/** Every this many rounds each service is written again even if its tasks look the same: what another writer changed is put right. */
const REWRITE_EVERY_ROUNDS = 60;

/** The service events of these tasks: a task the kernel killed for its memory is named so. */
async function serviceEventsOf(deps: DeployDeps, tasks: SwarmTask[]): Promise<ServiceEvent[]> {
  const recorded: ServiceEvent[] = [];
  for (const { oomSuspect, ...event } of taskEvents(tasks)) {
    const oomKilled = oomSuspect ? await killedForMemory(deps, oomSuspect) : false;
    recorded.push(
      oomKilled
        ? {
            kind: 'OOM_KILLED',
            instanceId: event.instanceId,
            detail: `${event.detail} The kernel killed it for using more than its memory limit.`,
            dedupeKey: `oom:${event.instanceId}`,
          }
        : event,
    );
  }
  return recorded;
}

/**
 * Keeps every service's registry rows in step with the swarm's task list, twice a second, whatever moved the
 * tasks: a deploy or a scale, or the swarm on its own (a node drained or lost, a task that died and was
 * replaced). A task the swarm is stopping leaves the edge within FOLLOW_EVERY_MS and the control plane's
 * write; its drain window (the task keeps serving for a while after the swarm's SIGTERM, swarmServiceSpec)
 * covers that and the requests in flight. Two calls to the engine a round, for all services; the registry is
 * written only for a service whose routable tasks changed since this follower last wrote it (and every
 * REWRITE_EVERY_ROUNDS rounds), so a quiet swarm costs the database nothing. What the tasks went through
 * becomes service events (taskEvents), written when a service's task states changed (one more call to the
 * engine for a task that exited with 137: was it killed for memory?). Each round is safe to repeat and to run beside
 * another worker's: a sync writes only what changed, under the service's lock, and an event once by its key.
 */
export function followSwarmTasks(deps: DeployDeps, onError: (error: unknown) => void): { stop(): Promise<void> } {
  let running = true;
  // A failure is told once, not twice a second while the engine is away; again after a round that worked.
  let lastFailure: string | null = null;
  let wake: () => void = () => undefined;
  // Per service, the routable tasks this follower last wrote to the registry.
  let written = new Map<string, string>();
  let rounds = 0;
  // Per service, its tasks' states when this follower last recorded their events: a quiet swarm writes none.
  // A change records the service's events again, each once by its key in the table.
  const toldStates = new Map<string, string>();
  let lastEventFailure: string | null = null;
  const tellTaskEvents = async (serviceName: string, tasks: SwarmTask[]) => {
    const states = tasks
      .map((task) => `${task.ID}:${task.Status.State}`)
      .sort()
      .join(' ');
    if (toldStates.get(serviceName) === states) return;
    const recorded = await serviceEventsOf(deps, tasks);
    await recordServiceEvents(deps.db, serviceName, recorded);
    toldStates.set(serviceName, states);
  };
  const round = async () => {
    if (++rounds % REWRITE_EVERY_ROUNDS === 0) written = new Map();
    const services = (await deps.docker.listServices({ filters: { label: [`${LABELS.scope}=${deps.config.deploy.scope}`] } })) as Array<{
      ID: string;
      Spec: { Labels?: Record<string, string> };
    }>;
    if (services.length === 0) return;
    const tasks = (await deps.docker.listTasks({ filters: { service: services.map((service) => service.ID) } })) as SwarmTask[];
    // A service in a canary rollout has two swarm services (its own and its canary's): their tasks are one set of instances.
    const swarmServicesOf = new Map<string, string[]>();
    for (const service of services) {
      const serviceName = service.Spec.Labels?.[LABELS.service];
      if (serviceName) swarmServicesOf.set(serviceName, [...(swarmServicesOf.get(serviceName) ?? []), service.ID]);
    }
    for (const [serviceName, swarmServiceIds] of swarmServicesOf) {
      const itsTasks = tasks.filter((task) => swarmServiceIds.includes(task.ServiceID));
      const routable = routableOf(deps, serviceName, itsTasks);
      const seen = routable
        .map((task) => task.instance.instanceId)
        .sort()
        .join(' ');
      if (written.get(serviceName) !== seen) {
        await syncRoutable(deps, serviceName, routable);
        written.set(serviceName, seen);
      }
      // After the routing, and apart from it: an event that cannot be recorded now is tried again next round,
      // and never holds up what the edge routes to.
      await tellTaskEvents(serviceName, itsTasks).catch((error) => {
        if ((error as Error).message !== lastEventFailure) onError(error);
        lastEventFailure = (error as Error).message;
      });
    }
  };
  const loop = (async () => {
    while (running) {
      try {
        await round();
        lastFailure = null;
      } catch (error) {
        if ((error as Error).message !== lastFailure) onError(error);
        lastFailure = (error as Error).message;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, FOLLOW_EVERY_MS);
      });
    }
  })();
  return {
    stop: async () => {
      running = false;
      wake();
      await loop;
    },
  };
}
