import { findService } from '../../data/deploy/registry';
import { runningInstancesOf, setServiceLimits } from '../../data/deploy/services';
import { recordServiceEvents } from '../../data/deploy/events';
import { readContainerLimits as readLimits, updateContainerLimits } from '../../adapters/deploy/container-limits';
import { LIMITS_UNDER_SWARM, ServiceLimits } from '../../domain/deploy';
import { DeployDeps } from './deps';
import { isEngineRefusal, isGone } from './docker-errors';
import { finalFailure } from '../failures';

/** A running container of a service, with the limits the engine reported before a change. */
export interface ContainerLimits {
  instanceId: string;
  containerId: string;
  limits: ServiceLimits;
}

/**
 * The service's running instances (healthy or draining) and their limits as the engine reports them. A run
 * started past the API meets its refusals here too: a core service is compose's, and a swarm applies
 * limits by replacing tasks, not in place.
 */
export function readContainerLimits(deps: DeployDeps) {
  return async (input: { serviceName: string }): Promise<ContainerLimits[]> => {
    const service = await findService(deps.db, input.serviceName);
    if (!service) throw finalFailure('SERVICE_NOT_FOUND', `No service ${input.serviceName}.`);
    if (!service.dynamic) throw finalFailure('SERVICE_NOT_DYNAMIC', `${service.name} is a core service, managed through docker compose.`);
    if (deps.config.deploy.driver === 'swarm') throw finalFailure('VALIDATION_FAILED', LIMITS_UNDER_SWARM);
    const found: ContainerLimits[] = [];
    for (const instance of await runningInstancesOf(deps.db, service.id)) {
      const limits = await readLimits(deps.docker, instance.container_id);
      if (limits) found.push({ instanceId: instance.id, containerId: instance.container_id, limits });
    }
    return found;
  };
}

/**
 * Gives every container the limits in place. The first the engine refuses ends it with LIMITS_NOT_APPLIED,
 * and the workflow puts every container back (`restoreContainerLimits`). No answer at all is an outage,
 * tried again. A container gone meanwhile has nothing to change; the same limits set twice change nothing.
 */
export function applyContainerLimits(deps: DeployDeps) {
  return async (input: { containers: ContainerLimits[]; limits: ServiceLimits }): Promise<{ changed: number }> => {
    let changed = 0;
    for (const container of input.containers) {
      try {
        await updateContainerLimits(deps.docker, container.containerId, input.limits);
        changed++;
      } catch (error) {
        if (isGone(error)) continue;
        if (!isEngineRefusal(error)) throw error;
        throw finalFailure('LIMITS_NOT_APPLIED', `The engine refused the limits for instance ${container.instanceId.slice(0, 8)}: ${(error as Error).message}`);
      }
    }
    return { changed };
  };
}

/**
 * Puts each container back to the limits read before the change; a container gone has nothing to put back.
 * Answers the instances the engine refused to put back (an outage is tried again instead).
 */
export function restoreContainerLimits(deps: DeployDeps) {
  return async (input: { containers: ContainerLimits[] }): Promise<{ notRestored: string[] }> => {
    const notRestored: string[] = [];
    for (const container of input.containers) {
      try {
        await updateContainerLimits(deps.docker, container.containerId, container.limits);
      } catch (error) {
        if (isGone(error)) continue;
        if (!isEngineRefusal(error)) throw error;
        notRestored.push(container.instanceId);
      }
    }
    return { notRestored };
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
