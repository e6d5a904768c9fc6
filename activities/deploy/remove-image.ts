import { DeployDeps } from './deps';
import { isGone } from './docker-errors';

/**
 * Removes an image this platform built, by its id: with every name it has, such as the digest the swarm
 * driver's push gave it. One already gone is fine.
 */
export function removeImage({ docker }: DeployDeps) {
  return async (input: { image: string }): Promise<void> => {
    try {
      const { Id } = await docker.getImage(input.image).inspect();
      await docker.getImage(Id).remove({ force: true });
    } catch (error) {
      if (!isGone(error)) throw error;
    }
  };
}
