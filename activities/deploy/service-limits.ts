import { findService } from '../../data/deploy/registry';
import { instancesOf, setServiceLimits } from '../../data/deploy/services';
import { recordServiceEvents } from '../../data/deploy/events';
import { readContainerLimits as readLimits, updateContainerLimits } from '../../adapters/deploy/container-limits';
import { ServiceLimits } from '../../domain/deploy';
import { DeployDeps } from './deps';
import { isEngineAnswer, isGone } from './docker-errors';
import { finalFailure } from '../failures';

/** A running container of a service, with the limits the engine reported before a change. */
export interface ContainerLimits {
  instanceId: string;
  containerId: string;
  limits: ServiceLimits;
}

/** The service's running instances (healthy or draining) and their limits as the engine reports them. */
export function readContainerLimits(deps: DeployDeps) {
  return async (input: { serviceName: string }): Promise<ContainerLimits[]> => {
    const service = await findService(deps.db, input.serviceName);
    if (!service) return [];
    const running = (await instancesOf(deps.db, service.id)).filter((instance) => instance.state === 'HEALTHY' || instance.state === 'DRAINING');
    const found: ContainerLimits[] = [];
    for (const instance of running) {
      const limits = await readLimits(deps.docker, instance.container_id);
      if (limits) found.push({ instanceId: instance.id, containerId: instance.container_id, limits });
    }
    return found;
  };
}

/**
 * Gives every container the limits in place, or none of them: the first the engine refuses puts back the
 * ones before it, to the limits read before the change (so a retried attempt puts back the same). A
 * container gone meanwhile has nothing to change. Setting the same limits twice changes nothing.
 */
export function applyContainerLimits(deps: DeployDeps) {
  return async (input: { containers: ContainerLimits[]; limits: ServiceLimits }): Promise<{ changed: number }> => {
    let changed = 0;
    for (const [index, container] of input.containers.entries()) {
      try {
        await updateContainerLimits(deps.docker, container.containerId, input.limits);
        changed++;
      } catch (error) {
        if (isGone(error)) continue;
        // No answer at all is an outage: the activity is tried again. An answer is a refusal.
        if (!isEngineAnswer(error)) throw error;
        // As the API did before: putting back is the best that can be done, and a failure there changes no answer.
        for (const done of input.containers.slice(0, index)) await updateContainerLimits(deps.docker, done.containerId, done.limits).catch(() => undefined);
        throw finalFailure('LIMITS_NOT_APPLIED', `The engine refused the limits for instance ${container.instanceId.slice(0, 8)}: ${(error as Error).message}`);
      }
    }
    return { changed };
  };
}

/** Keeps the limits for the instances started later, and records who set them (once per change). */
export function recordServiceLimits(deps: DeployDeps) {
  return async (input: { serviceName: string; limits: ServiceLimits; by: string; changeId: string }): Promise<void> => {
    const service = await findService(deps.db, input.serviceName);
    if (!service) return;
    const { limits } = input;
    await setServiceLimits(deps.db, { serviceId: service.id, limits });
    await recordServiceEvents(deps.db, service.name, [
      {
        kind: 'LIMITS_CHANGED',
        instanceId: null,
        detail: `${input.by} set ${limits.memoryMb} MiB, ${limits.cpus} CPU(s), ${limits.pids} processes at most.`,
        dedupeKey: `limits:${input.changeId}`,
      },
    ]);
  };
}
