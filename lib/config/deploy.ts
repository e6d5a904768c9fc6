import { ConfigError, decimal, dockerName, Env, flag, integer, matching, optional, text } from './read';

export const DEPLOY_DRIVERS = ['docker', 'swarm'] as const;
export type DeployDriverName = (typeof DEPLOY_DRIVERS)[number];

/** How deployed services run: the driver, their images, networks, limits and timings. */
export interface DeployConfig {
  /** Where deployed services run: `docker` (containers on the engine beside the deploy worker) or `swarm` (services of a Docker Swarm). */
  driver: DeployDriverName;
  /** The registry (`host:port`) JAR images are pushed to, so that every swarm node runs the same bytes; the swarm driver needs one. */
  registry: string | null;
  baseImage: string;
  /**
   * What a JAR deploy does when the base image is missing: `none` leaves it to the engine (a pull, in
   * production), `debian` builds it from Debian packages (debootstrap), as `npm start` sets for a machine
   * that reaches no image registry.
   */
  baseImageBuild: 'none' | 'debian';
  /** The prefix of each deployed service's own network (`{prefix}-{service}`). */
  network: string;
  /** The IPv4 block each service's bridge network takes a /26 of (Docker's default pools hold about 30 networks). */
  subnetPool: string;
  /** Containers joined to every service network: the gateway and the health checks when they run in containers (docker compose). */
  attachContainers: string[];
  /** Prefix of deploy image names and value of the `opsflow.scope` label: separates platforms sharing one engine. */
  scope: string;
  /** Host address a deploy's `hostPort` binds on. */
  hostBind: string;
  memoryMb: number;
  pidsLimit: number;
  /** CPUs each deployed container may use (a CFS quota; fractions allowed). */
  cpus: number;
  /** Log rotation of every deployed container: the size of one file (Docker's `max-size`) and how many are kept. */
  logMaxSize: string;
  logMaxFiles: number;
  /** Whether a deploy may bind a host port below 1024 (privileged on the host); refused unless set. */
  allowLowHostPorts: boolean;
  /** How long a new instance has to answer its health check. */
  healthTimeoutSeconds: number;
  /** How long replaced instances keep serving requests already routed to them before they stop. */
  drainSeconds: number;
  /** How often the reconcile schedule compares desired and running instances. */
  reconcileSeconds: number;
  maxJarBytes: number;
}

/**
 * Container names, each exact or a prefix ending in `*` (compose's numbered replicas). A prefix is at least
 * four characters and the `*` only at the end: a bare `*` would join every container on the engine to every
 * service's network.
 */
function attachList(env: Env, name: string): string[] {
  const entries = (env[name] ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const exactName = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
  const prefix = /^[A-Za-z0-9][A-Za-z0-9_.-]{3,}\*$/;
  const bad = entries.find((entry) => !exactName.test(entry) && !prefix.test(entry));
  if (bad !== undefined) throw new ConfigError(name, `"${bad}" is not a container name, or a prefix of four or more characters ending in *`);
  return entries;
}

function baseImageBuild(env: Env): DeployConfig['baseImageBuild'] {
  const build = text(env, 'DEPLOY_BASE_IMAGE_BUILD', 'none');
  if (build !== 'none' && build !== 'debian') throw new ConfigError('DEPLOY_BASE_IMAGE_BUILD', `must be none or debian, got "${build}"`);
  return build;
}

/** The deploy driver, and the registry the swarm driver cannot work without: a node pulls its image from there. */
function deployDriverSettings(env: Env): Pick<DeployConfig, 'driver' | 'registry'> {
  const driver = text(env, 'DEPLOY_DRIVER', 'docker');
  if (!(DEPLOY_DRIVERS as readonly string[]).includes(driver))
    throw new ConfigError('DEPLOY_DRIVER', `must be ${DEPLOY_DRIVERS.join(' or ')}, got "${driver}"`);
  const registry = optional(env, 'DEPLOY_REGISTRY');
  if (registry !== null && !/^[A-Za-z0-9.-]+:\d{1,5}$/.test(registry)) throw new ConfigError('DEPLOY_REGISTRY', `must be host:port, got "${registry}"`);
  if (driver === 'swarm' && registry === null)
    throw new ConfigError('DEPLOY_REGISTRY', 'must be set when DEPLOY_DRIVER is swarm: every node pulls its image from the registry');
  return { driver: driver as DeployDriverName, registry };
}

/** DEPLOY_SUBNET_POOL: an IPv4 CIDR that holds one service's /26 at least. */
function subnetPool(env: Env): string {
  const pool = matching(
    env,
    'DEPLOY_SUBNET_POOL',
    '10.213.0.0/16',
    /^(\d{1,3}\.){3}\d{1,3}\/(\d|1\d|2[0-6])$/,
    'an IPv4 CIDR of /26 or wider, such as 10.213.0.0/16',
  );
  if (
    pool
      .split('/')[0]
      .split('.')
      .some((octet) => Number(octet) > 255)
  )
    throw new ConfigError('DEPLOY_SUBNET_POOL', `"${pool}" is not an IPv4 address block`);
  return pool;
}

export function deployConfig(env: Env): DeployConfig {
  return {
    ...deployDriverSettings(env),
    baseImage: text(env, 'DEPLOY_BASE_IMAGE', 'eclipse-temurin:17-jre'),
    baseImageBuild: baseImageBuild(env),
    network: dockerName(env, 'DEPLOY_NETWORK', 'opsflow'),
    subnetPool: subnetPool(env),
    attachContainers: attachList(env, 'DEPLOY_ATTACH_CONTAINERS'),
    scope: dockerName(env, 'DEPLOY_SCOPE', 'opsflow'),
    hostBind: text(env, 'DEPLOY_HOST_BIND', '127.0.0.1'),
    memoryMb: integer(env, 'DEPLOY_MEMORY_MB', 512, 64, 65536),
    pidsLimit: integer(env, 'DEPLOY_PIDS_LIMIT', 512, 16, 65536),
    cpus: decimal(env, 'DEPLOY_CPUS', 1, 0.01, 256),
    logMaxSize: matching(env, 'DEPLOY_LOG_MAX_SIZE', '10m', /^[1-9][0-9]*[kmg]$/, 'a size such as 10m'),
    logMaxFiles: integer(env, 'DEPLOY_LOG_MAX_FILES', 3, 1, 100),
    allowLowHostPorts: flag(env, 'DEPLOY_ALLOW_LOW_HOST_PORTS'),
    healthTimeoutSeconds: integer(env, 'DEPLOY_HEALTH_TIMEOUT_SECONDS', 120, 1, 3600),
    drainSeconds: integer(env, 'DEPLOY_DRAIN_SECONDS', 3, 1, 600),
    reconcileSeconds: integer(env, 'DEPLOY_RECONCILE_SECONDS', 30, 5, 86400),
    maxJarBytes: integer(env, 'MAX_JAR_BYTES', 512 * 1024 * 1024, 1024, 2 * 1024 * 1024 * 1024),
  };
}
