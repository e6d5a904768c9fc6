import Docker from 'dockerode';
import { LABELS } from '../../data/deploy/labels';
import { DeployDeps } from './deps';

/**
 * Each deployed service gets a bridge network of its own, shared with nobody but its own instances and the
 * gateway: a neighbour container cannot reach a service's port and forge its `X-User-*` headers. The
 * gateway (on the host under `npm start`, the API container under docker compose, joined through
 * DEPLOY_ATTACH_CONTAINERS) reaches every one.
 */
export const serviceNetworkName = (args: { network: string; serviceName: string }) => `${args.network}-${args.serviceName}`;

const statusOf = (error: unknown) => (error as { statusCode?: number }).statusCode;

/**
 * The running containers DEPLOY_ATTACH_CONTAINERS names: each name as it is, and for `prefix*` every
 * container whose name starts with the prefix (compose's replicas `opsflow-deploy-worker-1`, `-2`, …).
 */
async function attachedContainers(docker: Docker, attach: readonly string[]): Promise<string[]> {
  const exact = attach.filter((entry) => !entry.endsWith('*'));
  const prefixes = attach.filter((entry) => entry.endsWith('*')).map((entry) => entry.slice(0, -1));
  if (prefixes.length === 0) return exact;
  const running = (await docker.listContainers()).flatMap((container) => container.Names.map((name) => name.replace(/^\//, '')));
  return [...new Set([...exact, ...running.filter((name) => prefixes.some((prefix) => name.startsWith(prefix)))])];
}

/** Creates the service's network if it is missing and attaches the containers that must reach it; idempotent. */
export async function ensureServiceNetwork(
  docker: Docker,
  args: { network: string; serviceName: string; scope: string; attach: readonly string[]; driver?: 'bridge' | 'overlay' },
): Promise<string> {
  const name = serviceNetworkName(args);
  const existing = await docker.listNetworks({ filters: { name: [name] } });
  if (!existing.some((network) => network.Name === name)) {
    try {
      // An overlay (the swarm driver) spans the swarm's nodes; attachable, so the gateway's container can join it.
      const driver = args.driver ?? 'bridge';
      await docker.createNetwork({
        Name: name,
        Driver: driver,
        Attachable: driver === 'overlay',
        CheckDuplicate: true,
        Labels: { [LABELS.scope]: args.scope, [LABELS.service]: args.serviceName },
      });
    } catch (error) {
      if (statusOf(error) !== 409) throw error;
    }
  }
  for (const container of await attachedContainers(docker, args.attach)) {
    try {
      await docker.getNetwork(name).connect({ Container: container });
    } catch (error) {
      // Already attached: 403 from the engine ("endpoint … already exists"), 409 for an overlay ("already attached").
      if (statusOf(error) !== 403 && statusOf(error) !== 409) throw error;
    }
  }
  return name;
}

/** Removes the service's network once its containers are gone; a network already gone is fine. */
export async function removeServiceNetwork(docker: Docker, args: { network: string; serviceName: string; attach: readonly string[] }): Promise<void> {
  const network = docker.getNetwork(serviceNetworkName(args));
  for (const container of await attachedContainers(docker, args.attach)) await network.disconnect({ Container: container, Force: true }).catch(() => undefined);
  try {
    await network.remove();
  } catch (error) {
    if (statusOf(error) !== 404) throw error;
  }
}

/** The service's network as the configuration names it, made if missing (ensureServiceNetwork); answers its name. */
export function ensureNetworkOf({ docker, config }: Pick<DeployDeps, 'docker' | 'config'>, serviceName: string, driver: 'bridge' | 'overlay'): Promise<string> {
  return ensureServiceNetwork(docker, {
    network: config.deploy.network,
    serviceName,
    scope: config.deploy.scope,
    attach: config.deploy.attachContainers,
    driver,
  });
}

/**
 * The activity: makes the service's network ready before its instances start (while its image is built),
 * so the start does not wait for it. Starting an instance still makes sure of it; repeating changes nothing.
 */
export function prepareServiceNetwork(deps: DeployDeps, driver: 'bridge' | 'overlay') {
  return async (input: { serviceName: string }): Promise<void> => {
    await ensureNetworkOf(deps, input.serviceName, driver);
  };
}
