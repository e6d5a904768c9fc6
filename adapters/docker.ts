import fs from 'node:fs';
import Docker from 'dockerode';
import { within } from '../lib/within';

export interface DockerHandle {
  docker: Docker;
  /** True when DOCKER_HOST is set or the default socket exists: then /readyz requires the engine. */
  configured: boolean;
  ping(timeoutMs?: number): Promise<boolean>;
}

const DEFAULT_SOCKET = '/var/run/docker.sock';

/** What a request that needs the engine is told when it does not answer: the fix, not only the fault. */
export const DOCKER_UNAVAILABLE_DETAIL =
  'The Docker engine does not answer: install it (apt-get install docker.io) and start it (dockerd, as root), or set DOCKER_HOST to one that runs.';

function connectionOptions(dockerHost: string | null): Docker.DockerOptions {
  if (!dockerHost) return { socketPath: DEFAULT_SOCKET };
  if (dockerHost.startsWith('unix://')) return { socketPath: dockerHost.slice('unix://'.length) };
  const url = new URL(dockerHost.replace(/^tcp:/, 'http:'));
  return { host: url.hostname, port: Number(url.port || 2375), protocol: url.protocol === 'https:' ? 'https' : 'http' };
}

/** The Docker engine client (dockerode); only the API's checks and the deployments worker use it. */
export function createDocker(args: { dockerHost: string | null }): DockerHandle {
  const docker = new Docker(connectionOptions(args.dockerHost));
  return {
    docker,
    configured: args.dockerHost !== null || fs.existsSync(DEFAULT_SOCKET),
    async ping(timeoutMs = 2000) {
      try {
        await within(docker.ping(), timeoutMs);
        return true;
      } catch {
        return false;
      }
    },
  };
}
