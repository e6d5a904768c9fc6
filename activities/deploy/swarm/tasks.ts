import Docker from 'dockerode';
import { TaskInstance, taskInstanceId } from '../../../data/deploy/instances';
import { LABELS } from '../../../data/deploy/labels';
import { isGone } from '../docker-errors';
import { ServiceEvent } from '../../../domain/deploy';

/** A task as the engine answers it: the fields the swarm driver reads. */
export interface SwarmTask {
  ID: string;
  DesiredState: string;
  ServiceID: string;
  /** The replica's place: a task the swarm starts to replace a failed one takes the same slot. */
  Slot?: number;
  CreatedAt?: string;
  Spec: { ContainerSpec: { Labels?: Record<string, string>; Env?: string[] } };
  Status: { State: string; Err?: string; Message?: string; ContainerStatus?: { ContainerID?: string; ExitCode?: number } };
  NetworksAttachments?: Array<{ Network: { Spec: { Name: string } }; Addresses: string[] }>;
}

export async function tasksOf(docker: Docker, swarmService: string): Promise<SwarmTask[]> {
  try {
    return (await docker.listTasks({ filters: { service: [swarmService] } })) as SwarmTask[];
  } catch (error) {
    // The engine answers a filter naming a service it does not have with 404, not an empty list: a service
    // removed (the undo of a first deploy, an undeploy) has no tasks.
    if (isGone(error)) return [];
    throw error;
  }
}

export const deploymentOfTask = (task: SwarmTask) => task.Spec.ContainerSpec.Labels?.[LABELS.deployment] ?? '';

/** A task whose container may still run: not yet in one of the swarm's final states. */
export const taskStillUp = (task: SwarmTask) => !['complete', 'shutdown', 'failed', 'rejected', 'orphaned', 'remove'].includes(task.Status.State);

/** The port the task's app listens on: its deployment's, which the task spec hands it as SERVER_PORT. */
function portOfTask(task: SwarmTask): number | null {
  const setting = task.Spec.ContainerSpec.Env?.find((entry) => entry.startsWith('SERVER_PORT='));
  const port = setting ? Number(setting.slice('SERVER_PORT='.length)) : NaN;
  return Number.isInteger(port) && port > 0 ? port : null;
}

/** A task the edge may route to, and whether the swarm has seen it pass its own health check. */
export interface RoutableTask {
  instance: TaskInstance;
  healthy: boolean;
}

/**
 * The tasks the edge routes to: every one whose container runs and that the swarm means to keep. One still
 * starting is routed as well: the edge's own health check holds requests back until it passes, so in a
 * rolling update the new task can take requests by the time the swarm stops the old one (which, about to
 * be stopped, is let go at once). The swarm reports a task with a health check `running` only once passed.
 */
export function routableTasks(tasks: SwarmTask[], args: { network: string }): RoutableTask[] {
  return tasks.flatMap((task) => {
    if (!['starting', 'running'].includes(task.Status.State) || task.DesiredState !== 'running') return [];
    const attachment = task.NetworksAttachments?.find((candidate) => candidate.Network.Spec.Name === args.network);
    const ip = attachment?.Addresses[0]?.split('/')[0];
    const containerId = task.Status.ContainerStatus?.ContainerID;
    const port = portOfTask(task);
    if (!ip || !containerId || !port) return [];
    const instance = { instanceId: taskInstanceId(task.ID), containerId, address: `${ip}:${port}`, deploymentId: deploymentOfTask(task) };
    return [{ instance, healthy: task.Status.State === 'running' }];
  });
}

/** Why tasks of a deployment failed, in the docker driver's words where the swarm gives an exit code; each reason once. */
export function taskFailures(tasks: SwarmTask[], args: { deploymentId: string; healthPath: string }): string[] {
  const reasons = tasks
    .filter((task) => deploymentOfTask(task) === args.deploymentId && ['failed', 'rejected'].includes(task.Status.State))
    .map((task) => {
      const exitCode = task.Status.ContainerStatus?.ExitCode;
      const swarmSays = task.Status.Err ?? task.Status.Message ?? task.Status.State;
      if (swarmSays.includes('unhealthy container'))
        return `The health check of ${args.healthPath} did not pass before the deadline (the swarm stopped the task: ${swarmSays})`;
      return exitCode ? `The container exited with code ${exitCode} before it became healthy (${swarmSays})` : swarmSays;
    });
  return [...new Set(reasons)];
}

/** A task of a service the swarm started: what it became, as a service event (the key names the task). */
export interface TaskEvent extends ServiceEvent {
  /** Set on a task that ended with exit code 137: its container is asked whether the kernel killed it for memory. */
  oomSuspect?: string;
}

const FAILED_STATES = ['failed', 'rejected'];

/**
 * The events the swarm's task list tells of one service: each task started, passed its health check (the swarm
 * reports a task with a health check `running` only once it passed), or failed (unhealthy, or exited); and a
 * task the swarm started in a slot whose earlier task failed is a restart. A task the swarm shut down on
 * purpose (an update, a scale down) is none of these.
 */
export function taskEvents(tasks: SwarmTask[]): TaskEvent[] {
  const events: TaskEvent[] = [];
  const ordered = [...tasks].sort((a, b) => (a.CreatedAt ?? '').localeCompare(b.CreatedAt ?? ''));
  // A slot is its swarm service's: a service in a canary rollout has two, each with a slot 1.
  const slotOf = (task: SwarmTask) => (task.Slot === undefined ? undefined : `${task.ServiceID}/${task.Slot}`);
  const failedSlots = new Map<string, SwarmTask>();
  for (const task of ordered) {
    const instanceId = taskInstanceId(task.ID);
    const short = task.ID.slice(0, 12);
    const containerId = task.Status.ContainerStatus?.ContainerID;
    const state = task.Status.State;
    if (containerId) events.push({ kind: 'STARTED', instanceId, detail: `The swarm started task ${short}.`, dedupeKey: `started:${instanceId}` });
    if (state === 'running') events.push({ kind: 'HEALTHY', instanceId, detail: `Task ${short} passed its health check.`, dedupeKey: `healthy:${instanceId}` });
    const slot = slotOf(task);
    const previous = slot === undefined ? undefined : failedSlots.get(slot);
    if (previous && containerId) {
      events.push({
        kind: 'RESTARTED',
        instanceId,
        detail: `Started by the swarm in place of task ${previous.ID.slice(0, 12)}, which failed.`,
        dedupeKey: `restarted:${instanceId}`,
      });
      // Only the task that took the failed one's place is its restart; a later one in the slot (an update) is not.
      failedSlots.delete(slot!);
    }
    if (FAILED_STATES.includes(state)) {
      if (slot !== undefined) failedSlots.set(slot, task);
      const swarmSays = task.Status.Err ?? task.Status.Message ?? state;
      const exitCode = task.Status.ContainerStatus?.ExitCode;
      if (swarmSays.includes('unhealthy container'))
        events.push({ kind: 'UNHEALTHY', instanceId, detail: `Task ${short} failed its health check: ${swarmSays}.`, dedupeKey: `unhealthy:${instanceId}` });
      else
        events.push({
          kind: 'EXITED',
          instanceId,
          detail: `Task ${short} exited${exitCode ? ` with code ${exitCode}` : ''}: ${swarmSays}.`,
          dedupeKey: `exit:${instanceId}`,
          ...(exitCode === 137 && containerId ? { oomSuspect: containerId } : {}),
        });
    }
  }
  return events;
}
