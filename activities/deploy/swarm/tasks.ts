import Docker from 'dockerode';
import { TaskInstance, taskInstanceId } from '../../../data/deploy/instances';
import { LABELS } from '../../../data/deploy/labels';
import { isGone } from '../docker-errors';

/** A task as the engine answers it: the fields the swarm driver reads. */
export interface SwarmTask {
  ID: string;
  DesiredState: string;
  ServiceID: string;
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
