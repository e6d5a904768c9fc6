import { serviceFilters } from '../../data/deploy/labels';
import { DeployDeps } from './deps';
import { removeContainers } from './remove-containers';

/** Removes every container of the service that this platform started, found by its labels. */
export function removeServiceContainers({ docker, config }: DeployDeps) {
  return async (input: { serviceName: string }): Promise<{ removed: number }> => {
    const containers = await docker.listContainers({ all: true, filters: serviceFilters(config.deployScope, input.serviceName) });
    await removeContainers(docker, containers.map((container) => container.Id));
    return { removed: containers.length };
  };
}
