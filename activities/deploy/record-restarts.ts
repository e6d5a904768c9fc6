import { recordServiceEvents } from '../../data/deploy/events';
import { DeployDeps } from './deps';

/**
 * A scale that replaced stopped instances says so in the service's history: each new instance is RESTARTED
 * in place of one that stopped. Keyed by the new instance, the key the swarm follower gives a task the swarm
 * started in place of a failed one, so the same restart is never told twice.
 */
export function recordRestarts({ db }: DeployDeps) {
  return async (input: { serviceName: string; replaced: string[]; startedInstead: string[] }): Promise<void> => {
    await recordServiceEvents(
      db,
      input.serviceName,
      input.startedInstead.slice(0, input.replaced.length).map((instanceId, index) => ({
        kind: 'RESTARTED' as const,
        instanceId,
        detail: `Started by the reconcile in place of instance ${input.replaced[index].slice(0, 8)}, which had stopped.`,
        dedupeKey: `restarted:${instanceId}`,
      })),
    );
  };
}
