import { DeployDeps } from './deps';
import { isGone } from './docker-errors';

/**
 * Removes an image this platform built; one already gone is fine. Removed by name (a container still running
 * it keeps running); a pushed image (the swarm driver) still has its registry digest as a name, so it is then
 * removed by id when no tag is left, unless a container still uses it (its removal waits for the next prune).
 */
export function removeImage({ docker }: DeployDeps) {
  return async (input: { image: string }): Promise<void> => {
    let id: string;
    try {
      id = (await docker.getImage(input.image).inspect()).Id;
      await docker.getImage(input.image).remove({ force: true });
    } catch (error) {
      if (isGone(error)) return;
      throw error;
    }
    try {
      const left = await docker.getImage(id).inspect();
      if ((left.RepoTags ?? []).length === 0) await docker.getImage(id).remove({ force: true });
    } catch (error) {
      // 409: a container still uses it.
      if (!isGone(error) && (error as { statusCode?: number }).statusCode !== 409) throw error;
    }
  };
}
