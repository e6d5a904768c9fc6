import { createHash } from 'node:crypto';
import Docker from 'dockerode';
import { TaskInstance } from '../../../data/deploy/instances';
import { LABELS } from '../../../data/deploy/labels';

/** A task as the engine answers it: the fields the swarm driver reads. */
export interface SwarmTask {
  ID: string;
  DesiredState: string;
  Spec: { ContainerSpec: { Labels?: Record<string, string> } };
  Status: { State: string; Err?: string; Message?: string; ContainerStatus?: { ContainerID?: string; ExitCode?: number } };
  NetworksAttachments?: Array<{ Network: { Spec: { Name: string } }; Addresses: string[] }>;
}

/** The registry's id of a task's instance: a UUID made from the task's id, the same on every call. */
export function taskInstanceId(taskId: string): string {
  const hex = createHash('sha256').update(`swarm-task:${taskId}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export async function tasksOf(docker: Docker, swarmService: string): Promise<SwarmTask[]> {
  return (await docker.listTasks({ filters: { service: [swarmService] } })) as SwarmTask[];
}

export const deploymentOfTask = (task: SwarmTask) => task.Spec.ContainerSpec.Labels?.[LABELS.deployment] ?? '';

/**
 * The tasks that serve: running (which, with a health check, the swarm reports only once it passed) and
 * meant to go on running, so a task the swarm is about to stop in a rolling update is already let go.
 */
export function servingTasks(tasks: SwarmTask[], args: { network: string; port: number }): TaskInstance[] {
  return tasks.flatMap((task) => {
    if (task.Status.State !== 'running' || task.DesiredState !== 'running') return [];
    const attachment = task.NetworksAttachments?.find((candidate) => candidate.Network.Spec.Name === args.network);
    const ip = attachment?.Addresses[0]?.split('/')[0];
    const containerId = task.Status.ContainerStatus?.ContainerID;
    if (!ip || !containerId) return [];
    return [{ instanceId: taskInstanceId(task.ID), containerId, address: `${ip}:${args.port}`, deploymentId: deploymentOfTask(task) }];
  });
}

/** Why tasks of a deployment failed, as the swarm tells it (newest first, each reason once). */
export function taskFailures(tasks: SwarmTask[], deploymentId: string): string[] {
  const reasons = tasks
    .filter((task) => deploymentOfTask(task) === deploymentId && ['failed', 'rejected'].includes(task.Status.State))
    .map((task) => task.Status.Err ?? task.Status.Message ?? task.Status.State);
  return [...new Set(reasons)];
}
