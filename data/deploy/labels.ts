/** The labels every container and image of a deployed service carries; how the platform finds its own. */
export const LABELS = {
  service: 'opsflow.service',
  dynamic: 'opsflow.dynamic',
  instance: 'opsflow.instance',
  scope: 'opsflow.scope',
  deployment: 'opsflow.deployment',
} as const;

/** Label filters that find the containers (or images) of one service of this platform. */
export function serviceFilters(scope: string, serviceName: string): { label: string[] } {
  return { label: [`${LABELS.scope}=${scope}`, `${LABELS.service}=${serviceName}`] };
}

/** Label filters that find the containers of this platform carrying one label's value (an instance, a deployment). */
export function labelFilters(scope: string, label: 'instance' | 'deployment', value: string): { label: string[] } {
  return { label: [`${LABELS.scope}=${scope}`, `${LABELS[label]}=${value}`] };
}

/** The swarm service of a deployed service (the swarm driver), named as its containers are under the docker driver. */
export const swarmServiceName = (args: { scope: string; serviceName: string }) => `${args.scope}-${args.serviceName}`;

/**
 * The swarm service a canary rollout runs its new version in, beside the service's own until the rollout ends.
 * A service name holds no `_`, so no service's own swarm service can be named so.
 */
export const canarySwarmServiceName = (args: { scope: string; serviceName: string }) => `${swarmServiceName(args)}_canary`;
