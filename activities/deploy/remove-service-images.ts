import { builtImages } from '../../data/deploy/instances';
import { serviceFilters } from '../../data/deploy/labels';
import { DeployDeps } from './deps';
import { isGone } from './docker-errors';
import { pruneRegistryImages } from './swarm/registry-image';

/**
 * Removes every image this platform built for the service (JAR deploys), from the engine and the registry
 * (DEPLOY_REGISTRY). An image deploy's image belongs to whoever built it and stays.
 */
export function removeServiceImages({ db, docker, config }: DeployDeps) {
  return async (input: { serviceName: string }): Promise<{ removed: number }> => {
    if (config.deploy.registry) await pruneRegistryImages(config.deploy.registry, { images: await builtImages(db, input.serviceName), keep: [] });
    const images = await docker.listImages({ filters: serviceFilters(config.deploy.scope, input.serviceName) });
    for (const image of images) {
      try {
        await docker.getImage(image.Id).remove({ force: true });
      } catch (error) {
        if (!isGone(error)) throw error;
      }
    }
    return { removed: images.length };
  };
}
