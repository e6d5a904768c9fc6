import { Context } from '@temporalio/activity';
import { DeployDeps } from './deps';
import { finalFailure } from '../failures';

/** An image deploy's image: present on the engine, or pulled; one that cannot be had fails the deploy. */
export function ensureImage({ docker }: DeployDeps) {
  return async (input: { image: string }): Promise<void> => {
    try {
      await docker.getImage(input.image).inspect();
      return;
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode !== 404) throw error;
    }
    const heartbeat = setInterval(() => Context.current().heartbeat({ stage: 'pull' }), 5000);
    try {
      const stream = await docker.pull(input.image);
      await new Promise<void>((resolve, reject) => docker.modem.followProgress(stream, (error: Error | null) => (error ? reject(error) : resolve())));
    } catch (error) {
      throw finalFailure('IMAGE_NOT_FOUND', `Image ${input.image} is not on the engine and could not be pulled: ${(error as Error).message}`);
    } finally {
      clearInterval(heartbeat);
    }
  };
}
