import { deleteInstanceRows } from '../../data/deploy/instances';
import { labelFilters } from '../../data/deploy/labels';
import { DeployDeps } from './deps';
import { removeContainers } from './remove-containers';

/**
 * Takes instances out of the registry (the gateway stops routing to them) and removes their containers,
 * found by their instance label, so an instance whose container was created but never registered goes too.
 */
export function removeInstances({ db, docker, config }: DeployDeps) {
  return async (input: { instanceIds: string[] }): Promise<void> => {
    if (input.instanceIds.length === 0) return;
    await deleteInstanceRows(db, input.instanceIds);
    const found = await Promise.all(
      input.instanceIds.map((id) => docker.listContainers({ all: true, filters: labelFilters(config.deployScope, 'instance', id) })),
    );
    await removeContainers(docker, found.flat().map((container) => container.Id));
  };
}
