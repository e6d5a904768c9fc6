import { deleteInstanceRows, instanceAddressesByService } from '../../data/deploy/instances';
import { labelFilters } from '../../data/deploy/labels';
import { DeployDeps } from './deps';
import { untilEdgeRoutes } from './edge-routing';
import { removeContainers } from './remove-containers';

/**
 * Takes instances out of the registry, waits until the edge no longer routes to them, and removes their
 * containers, found by their instance label, so an instance whose container was created but never
 * registered goes too. (A drained instance has left the edge already; this matters for dead ones and undos.)
 */
export function removeInstances({ db, docker, config }: DeployDeps) {
  return async (input: { instanceIds: string[] }): Promise<void> => {
    if (input.instanceIds.length === 0) return;
    const addresses = await instanceAddressesByService(db, input.instanceIds);
    await deleteInstanceRows(db, input.instanceIds);
    for (const [serviceName, gone] of addresses) await untilEdgeRoutes(config.edge.adminUrl, { serviceName, gone });
    const found = await Promise.all(
      input.instanceIds.map((id) => docker.listContainers({ all: true, filters: labelFilters(config.deploy.scope, 'instance', id) })),
    );
    await removeContainers(
      docker,
      found.flat().map((container) => container.Id),
    );
  };
}
