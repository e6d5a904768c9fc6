import { serviceFilters } from '../../data/deploy/labels';
import { DeployDeps } from './deps';
import { removeContainers } from './remove-containers';
import { removeServiceNetwork } from './service-network';

/** Removes every container of the service that this platform started, found by its labels, then its network. */
export function removeServiceContainers({ docker, config }: DeployDeps) {
  return async (input: { serviceName: string }): Promise<{ removed: number }> => {
    const containers = await docker.listContainers({ all: true, filters: serviceFilters(config.deploy.scope, input.serviceName) });
    await removeContainers(
      docker,
      containers.map((container) => container.Id),
    );
    await removeServiceNetwork(docker, { network: config.deploy.network, serviceName: input.serviceName, attach: config.deploy.attachContainers });
    return { removed: containers.length };
  };
}
