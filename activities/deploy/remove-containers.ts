import Docker from 'dockerode';
import { isConflict, isGone, isUnchanged } from './docker-errors';

/** Stops (SIGTERM, then SIGKILL after a grace period) and removes containers; ones already gone are fine. */
export async function removeContainers(docker: Docker, containerIds: string[]): Promise<void> {
  await Promise.all(
    containerIds.map(async (id) => {
      const container = docker.getContainer(id);
      try {
        await container.stop({ t: 5 });
      } catch (error) {
        if (!isGone(error) && !isUnchanged(error)) throw error;
      }
      try {
        await container.remove({ force: true, v: true });
      } catch (error) {
        // 409: removal already in progress from an earlier attempt.
        if (!isGone(error) && !isConflict(error)) throw error;
      }
    }),
  );
}
