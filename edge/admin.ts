import { VersionCounters } from '../domain/deploy';
import { canaryClusterOf, clusterOf } from './xds';

/** How the running edge holds one host of a service: routed (it takes requests) or not yet (its first check pending, failed or ejected). */
export type EdgeHosts = Map<string, 'ROUTED' | 'NOT_ROUTED'>;

interface ClusterStatuses {
  cluster_statuses?: Array<{
    name: string;
    host_statuses?: Array<{ address?: { socket_address?: { address: string; port_value: number } }; health_status?: Record<string, unknown> }>;
  }>;
}

/** A host takes requests when its discovery says HEALTHY and no check, ejection or removal flag is set. */
function isRouted(status: Record<string, unknown> = {}): boolean {
  return Object.entries(status).every(([flag, value]) => (flag === 'eds_health_status' ? value === 'HEALTHY' : value !== true));
}

/** What Envoy's admin answers at `path`, as JSON; null when it does not answer, or not with 2xx. */
async function adminJson<T>(adminUrl: string, path: string): Promise<T | null> {
  try {
    const answer = await fetch(`${adminUrl}${path}`, { signal: AbortSignal.timeout(2000) });
    return answer.ok ? ((await answer.json()) as T) : null;
  } catch {
    return null;
  }
}

/** A service's own cluster, or its rollout's canary cluster. */
export type EdgeVersion = 'current' | 'canary';
const clusterOfVersion = (serviceName: string, version: EdgeVersion) => (version === 'current' ? clusterOf(serviceName) : canaryClusterOf(serviceName));

/**
 * The hosts the edge (Envoy, through its admin) holds for a service (or its canary), by `host:port`; empty
 * when it has no cluster for it; null when the admin does not answer (the edge is not running).
 */
export async function edgeHostsOf(adminUrl: string, serviceName: string, version: EdgeVersion = 'current'): Promise<EdgeHosts | null> {
  const statuses = await adminJson<ClusterStatuses>(adminUrl, '/clusters?format=json');
  if (statuses === null) return null;
  const cluster = statuses.cluster_statuses?.find((candidate) => candidate.name === clusterOfVersion(serviceName, version));
  const hosts: EdgeHosts = new Map();
  for (const host of cluster?.host_statuses ?? []) {
    const socket = host.address?.socket_address;
    if (socket) hosts.set(`${socket.address}:${socket.port_value}`, isRouted(host.health_status) ? 'ROUTED' : 'NOT_ROUTED');
  }
  return hosts;
}

/** Whether Envoy is live (its admin `/ready`: listeners and clusters loaded, not draining). */
export async function edgeIsReady(adminUrl: string): Promise<boolean> {
  const answer = await fetch(`${adminUrl}/ready`, { signal: AbortSignal.timeout(2000) });
  return answer.status === 200;
}

/** Envoy's own statistics in Prometheus' text format (every name starts `envoy_`); null when its admin does not answer. */
export async function edgeMetrics(adminUrl: string): Promise<string | null> {
  try {
    const answer = await fetch(`${adminUrl}/stats/prometheus`, { signal: AbortSignal.timeout(2000) });
    return answer.ok ? await answer.text() : null;
  } catch {
    return null;
  }
}

const SAMPLE = /^(\w+)\{([^}]*)\} (\S+)$/;
const LABEL = /(\w+)="([^"]*)"/g;

/** The samples of Envoy's Prometheus text that belong to the named clusters: name, labels and value. */
function* clusterSamples(text: string, clusters: { has(name: string): boolean }) {
  for (const line of text.split('\n')) {
    const sample = SAMPLE.exec(line);
    if (!sample) continue;
    const labels = Object.fromEntries([...sample[2].matchAll(LABEL)].map((match) => [match[1], match[2]]));
    if (clusters.has(labels.envoy_cluster_name)) yield { name: sample[1], labels, value: Number(sample[3]) };
  }
}

/**
 * The counters of a service's two versions (its own cluster and its canary's), from Envoy's Prometheus
 * statistics; a version Envoy has no cluster for counts zero. Null when the admin does not answer.
 */
export async function edgeVersionCounters(adminUrl: string, serviceName: string): Promise<Record<EdgeVersion, VersionCounters> | null> {
  const text = await edgeMetrics(adminUrl);
  if (text === null) return null;
  const empty = (): VersionCounters => ({ completed: 0, errors5xx: 0, latencyBuckets: [], latencyCount: 0, healthyHosts: 0, hosts: 0 });
  const counters: Record<EdgeVersion, VersionCounters> = { current: empty(), canary: empty() };
  const versionOf = new Map<string, EdgeVersion>([
    [clusterOf(serviceName), 'current'],
    [canaryClusterOf(serviceName), 'canary'],
  ]);
  for (const { name, labels, value } of clusterSamples(text, versionOf)) {
    const into = counters[versionOf.get(labels.envoy_cluster_name)!];
    switch (name) {
      case 'envoy_cluster_upstream_rq_completed':
        into.completed = value;
        break;
      case 'envoy_cluster_upstream_rq_xx':
        if (labels.envoy_response_code_class === '5') into.errors5xx = value;
        break;
      case 'envoy_cluster_membership_healthy':
        into.healthyHosts = value;
        break;
      case 'envoy_cluster_membership_total':
        into.hosts = value;
        break;
      case 'envoy_cluster_upstream_rq_time_bucket':
        if (labels.le !== '+Inf') into.latencyBuckets.push([Number(labels.le), value]);
        break;
      case 'envoy_cluster_upstream_rq_time_count':
        into.latencyCount = value;
        break;
    }
  }
  for (const version of Object.values(counters)) version.latencyBuckets.sort((a, b) => a[0] - b[0]);
  return counters;
}

/** The gauges of a cluster's requests that have not ended: sent to a host, or waiting for a connection to one. */
const IN_FLIGHT_GAUGES = new Set(['envoy_cluster_upstream_rq_active', 'envoy_cluster_upstream_rq_pending_active']);

/**
 * The requests a service's clusters (its own and its canary's) have in flight now (sent to a host, or waiting
 * for a connection to one), from Envoy's statistics: a cluster Envoy no longer has counts zero. Null when the
 * admin does not answer.
 */
export async function edgeRequestsInFlight(adminUrl: string, serviceName: string): Promise<number | null> {
  const text = await edgeMetrics(adminUrl);
  if (text === null) return null;
  const clusters = new Set([clusterOf(serviceName), canaryClusterOf(serviceName)]);
  let inFlight = 0;
  for (const { name, value } of clusterSamples(text, clusters)) if (IN_FLIGHT_GAUGES.has(name)) inFlight += value;
  return inFlight;
}

interface RouteDump {
  configs?: Array<{ route_config?: { virtual_hosts?: Array<{ routes?: RunningRoute[] }> } }>;
}
interface RunningRoute {
  match?: { path?: string; prefix?: string };
  route?: RouteAction;
}
interface RouteAction {
  cluster?: string;
  weighted_clusters?: { clusters?: Array<{ name: string; weight?: number }> };
}

/** Every route of the route configuration Envoy runs now (its admin's dump); null when the admin does not answer. */
async function runningRoutes(adminUrl: string): Promise<RunningRoute[] | null> {
  const dump = await adminJson<RouteDump>(adminUrl, '/config_dump?resource=dynamic_route_configs');
  if (dump === null) return null;
  return (dump.configs ?? []).flatMap((config) => (config.route_config?.virtual_hosts ?? []).flatMap((host) => host.routes ?? []));
}

/**
 * Whether the routes Envoy runs still hold a path of `/api/{slug}`, to the service or to its "no healthy
 * instance" answer; null when the admin does not answer.
 */
export async function edgeRoutesSlug(adminUrl: string, slug: string): Promise<boolean | null> {
  const routes = await runningRoutes(adminUrl);
  if (routes === null) return null;
  const paths = new Set([`/api/${slug}`, `/api/${slug}/`]);
  return routes.some((route) => paths.has(route.match?.path ?? '') || paths.has(route.match?.prefix ?? ''));
}

/**
 * Whether any route Envoy runs sends requests to a service's cluster or its canary's (alone or weighted);
 * null when the admin does not answer. A cluster the registry dropped lingers a few seconds named by no route.
 */
export async function edgeRoutesToService(adminUrl: string, serviceName: string): Promise<boolean | null> {
  const routes = await runningRoutes(adminUrl);
  if (routes === null) return null;
  const clusters = new Set([clusterOf(serviceName), canaryClusterOf(serviceName)]);
  return routes.some(
    ({ route: action }) =>
      (action?.cluster !== undefined && clusters.has(action.cluster)) ||
      (action?.weighted_clusters?.clusters ?? []).some((cluster) => clusters.has(cluster.name)),
  );
}

/**
 * The share of a service's requests, in percent, that the routes Envoy runs now give its canary: 0 when no
 * route names the canary's cluster. Null when the admin does not answer.
 */
export async function edgeCanaryWeightOf(adminUrl: string, serviceName: string): Promise<number | null> {
  const routes = await runningRoutes(adminUrl);
  if (routes === null) return null;
  const canary = canaryClusterOf(serviceName);
  const own = clusterOf(serviceName);
  for (const { route: action } of routes) {
    if (!action) continue;
    if (action.cluster === canary) return 100;
    const clusters = action.weighted_clusters?.clusters ?? [];
    const share = clusters.find((cluster) => cluster.name === canary);
    if (share && clusters.some((cluster) => cluster.name === own)) return share.weight ?? 0;
  }
  return 0;
}

/**
 * Whether the edge has let go of what a dead deploy run left: no route gives the service's canary a share of
 * its requests, and none of `addresses` (the run's instances) is a host of the service's own cluster. Null
 * when the admin does not answer.
 */
export async function edgeLetGo(adminUrl: string, args: { serviceName: string; addresses: string[] }): Promise<boolean | null> {
  const weight = await edgeCanaryWeightOf(adminUrl, args.serviceName);
  if (weight === null) return null;
  if (weight > 0) return false;
  const hosts = await edgeHostsOf(adminUrl, args.serviceName);
  if (hosts === null) return null;
  return args.addresses.every((address) => !hosts.has(address));
}
