import { DeployDeps } from './deps';
import { isGone } from './docker-errors';

/** Removes an image this platform built; one already gone is fine. */
export function removeImage({ docker }: DeployDeps) {
  return async (input: { image: string }): Promise<void> => {
    try {
      await docker.getImage(input.image).remove({ force: true });
    } catch (error) {
      if (!isGone(error)) throw error;
    }
  };
}
