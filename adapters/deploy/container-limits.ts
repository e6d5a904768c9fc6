import Docker from 'dockerode';
import { ServiceLimits } from '../../domain/deploy';

const MIB = 1024 * 1024;

/**
 * The limits a running container has, as the engine reports them (its inspect output, not the spec it was
 * sent); null when the engine no longer knows the container.
 */
export async function readContainerLimits(docker: Docker, containerId: string): Promise<ServiceLimits | null> {
  try {
    const { HostConfig } = await docker.getContainer(containerId).inspect();
    return { memoryMb: (HostConfig.Memory ?? 0) / MIB, cpus: (HostConfig.NanoCpus ?? 0) / 1e9, pids: HostConfig.PidsLimit ?? 0 };
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return null;
    throw error;
  }
}

/** Sets a running container's limits in place (no restart); the engine refuses a memory limit below what it uses now. */
export async function updateContainerLimits(docker: Docker, containerId: string, limits: ServiceLimits): Promise<void> {
  await docker.getContainer(containerId).update({
    Memory: limits.memoryMb * MIB,
    MemorySwap: limits.memoryMb * MIB,
    NanoCpus: Math.round(limits.cpus * 1e9),
    PidsLimit: limits.pids,
  });
}
