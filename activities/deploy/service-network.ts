import Docker from 'dockerode';
import { LABELS } from '../../data/deploy/labels';
import { DeployDeps } from './deps';
import { freeSubnetIn, SERVICE_SUBNET_PREFIX } from '../../domain/service-subnets';
import { finalFailure } from '../failures';

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

/** How often a block is picked again when a deploy running beside this one took it first. */
const BLOCK_ATTEMPTS = 8;

/** Every IPv4 or IPv6 subnet `networks` hold. */
const subnetsOf = (networks: Docker.NetworkInspectInfo[]): string[] =>
  networks.flatMap((network) => (network.IPAM?.Config ?? []).map((config) => config.Subnet ?? '')).filter(Boolean);

/**
 * Creates a bridge network in a free /26 of `pool` (see domain/service-subnets.ts). Two deploys may pick the
 * same block at once; the engine refuses the second ("overlap"), which picks again. A network being made
 * beside this one may not be listed yet, so a block refused once is not tried again.
 */
async function createBridgeInPool(
  docker: Docker,
  options: Docker.NetworkCreateOptions & { Name: string },
  pool: string,
  networks: Docker.NetworkInspectInfo[],
): Promise<void> {
  const refused: string[] = [];
  for (let attempt = 1; ; attempt++) {
    // The engine's networks as the caller listed them, then as they are at each new try.
    const inUse = attempt === 1 ? subnetsOf(networks) : subnetsOf(await docker.listNetworks());
    const subnet = freeSubnetIn(pool, [...inUse, ...refused], options.Name);
    if (subnet === null) {
      const detail = `DEPLOY_SUBNET_POOL ${pool} has no free /${SERVICE_SUBNET_PREFIX} left for ${options.Name}: widen it, or remove the networks that hold its blocks`;
      throw finalFailure('SERVICE_NETWORKS_FULL', detail);
    }
    try {
      await docker.createNetwork({ ...options, IPAM: { Driver: 'default', Config: [{ Subnet: subnet }] } });
      return;
    } catch (error) {
      if (attempt >= BLOCK_ATTEMPTS || !/overlap/i.test(String((error as Error).message))) throw error;
      refused.push(subnet);
    }
  }
}

/** Creates the service's network if it is missing and attaches the containers that must reach it; idempotent. */
export async function ensureServiceNetwork(
  docker: Docker,
  args: { network: string; serviceName: string; scope: string; attach: readonly string[]; driver?: 'bridge' | 'overlay'; subnetPool: string },
): Promise<string> {
  const name = serviceNetworkName(args);
  // One listing says whether the network is there and, for a new bridge, which blocks are taken.
  const networks = await docker.listNetworks();
  if (!networks.some((network) => network.Name === name)) {
    try {
      const labels = { [LABELS.scope]: args.scope, [LABELS.service]: args.serviceName };
      // An overlay (the swarm driver) spans the swarm's nodes, in the swarm's own pool; attachable, so the
      // gateway's container can join it. A bridge takes a block of DEPLOY_SUBNET_POOL.
      if (args.driver === 'overlay') await docker.createNetwork({ Name: name, Driver: 'overlay', Attachable: true, CheckDuplicate: true, Labels: labels });
      else await createBridgeInPool(docker, { Name: name, Driver: 'bridge', CheckDuplicate: true, Labels: labels }, args.subnetPool, networks);
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
    subnetPool: config.deploy.subnetPool,
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
