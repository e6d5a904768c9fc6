import { builtImages, recentSuccessfulImages } from '../../data/deploy/instances';
import { KEPT_IMAGES } from '../../domain/deploy';
import { serviceFilters } from '../../data/deploy/labels';
import { DeployDeps } from './deps';
import { isGone } from './docker-errors';
import { pruneRegistryImages } from './swarm/registry-image';

/**
 * Keeps the images of the service's last successful deploys (for rollback) and removes its older built
 * images: from the registry (DEPLOY_REGISTRY), and from the engine once no container uses them.
 */
export function pruneServiceImages({ db, docker, config }: DeployDeps) {
  return async (input: { serviceName: string }): Promise<{ removed: string[] }> => {
    const kept = new Set(await recentSuccessfulImages(db, { serviceName: input.serviceName, count: KEPT_IMAGES }));
    const built = await docker.listImages({ filters: serviceFilters(config.deploy.scope, input.serviceName) });
    const removed: string[] = [];
    if (config.deploy.registry)
      removed.push(...(await pruneRegistryImages(config.deploy.registry, { images: await builtImages(db, input.serviceName), keep: [...kept] })));
    for (const image of built) {
      const tags = image.RepoTags ?? [];
      if (tags.some((tag) => kept.has(tag))) continue;
      try {
        await docker.getImage(image.Id).remove();
        removed.push(...tags);
      } catch (error) {
        // 409: a container still uses it (an instance not yet removed); the next prune takes it.
        if (!isGone(error) && (error as { statusCode?: number }).statusCode !== 409) throw error;
      }
    }
    return { removed };
  };
}
