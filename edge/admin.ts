import { clusterOf } from './envoy-config';

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

/**
 * The hosts the edge (Envoy, through its admin) holds for a service, by `host:port`; empty when it has no
 * cluster for it; null when the admin does not answer (the edge is not running).
 */
export async function edgeHostsOf(adminUrl: string, serviceName: string): Promise<EdgeHosts | null> {
  let statuses: ClusterStatuses;
  try {
    const answer = await fetch(`${adminUrl}/clusters?format=json`, { signal: AbortSignal.timeout(2000) });
    if (!answer.ok) return null;
    statuses = (await answer.json()) as ClusterStatuses;
  } catch {
    return null;
  }
  const cluster = statuses.cluster_statuses?.find((candidate) => candidate.name === clusterOf(serviceName));
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
