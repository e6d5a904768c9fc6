import { serviceFilters } from '../../data/deploy/labels';
import { DeployDeps } from './deps';
import { isGone } from './docker-errors';

/**
 * Removes every image this platform built for the service (JAR deploys). An image deploy's image belongs
 * to whoever built it and stays.
 */
export function removeServiceImages({ docker, config }: DeployDeps) {
  return async (input: { serviceName: string }): Promise<{ removed: number }> => {
    const images = await docker.listImages({ filters: serviceFilters(config.deployScope, input.serviceName) });
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
