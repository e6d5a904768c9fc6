import Docker from 'dockerode';
import { canarySwarmServiceName, LABELS, swarmServiceName } from '../../../data/deploy/labels';
import { DeploySettings } from '../../../data/deploy/registry';
import { DEFAULT_HEALTH_PATH } from '../../../domain/deploy';

export interface SwarmServiceArgs {
  serviceName: string;
  scope: string;
  deploymentId: string;
  /** The image by digest, as the registry holds it: every node runs the same bytes. */
  image: string;
  settings: DeploySettings;
  network: string;
  replicas: number;
  memoryMb: number;
  pidsLimit: number;
  cpus: number;
  log: { maxSize: string; maxFiles: number };
  healthTimeoutSeconds: number;
  /** The image's own command (entrypoint and arguments), run inside the drain window's wrapper. */
  command: string[];
  /** How long a stopping task keeps serving after the edge has let go of it (DEPLOY_DRAIN_SECONDS). */
  drainSeconds: number;
  /** A canary rollout's new version, in a swarm service of its own beside the service's (canarySwarmServiceName). */
  canary?: boolean;
}

const SECOND = 1_000_000_000;
const EDGE_SETTLE_SECONDS = 2;
/** From the swarm's stop to the edge no longer routing: the task list followed twice a second, then the control plane's write. */
const EDGE_RELEASE_SECONDS = 2;
/** How long the app has to exit after its own SIGTERM, before the swarm kills it. */
const APP_STOP_SECONDS = 10;

/**
 * The drain window: the swarm stops a task (a drain, a scale down, a rolling update, a removal) by sending
 * SIGTERM at once, with no hook to wait for the edge, and most apps then exit with requests in flight. The
 * task's first process is this shell instead: it runs the image's command, and on SIGTERM keeps it serving
 * for `$0` seconds (while the edge lets go of the task and its requests in flight finish), then passes the
 * SIGTERM on and exits with the app's status. It needs the image's sh, as the health check does.
 */
const DRAIN_WRAPPER = [
  'trap \'sleep "$0"; stop=1; [ -z "$app" ] || kill -TERM "$app" 2>/dev/null\' TERM INT',
  '"$@" &',
  'app=$!',
  // A SIGTERM that came before the app's pid was known (a stop in the first instant) is passed on now.
  '[ -z "$stop" ] || kill -TERM "$app" 2>/dev/null',
  // A trapped signal ends a wait early; wait again until the app itself has exited.
  'while :; do wait "$app"; status=$?; kill -0 "$app" 2>/dev/null || exit "$status"; done',
].join('\n');

/**
 * The swarm service of a deployed service: the docker driver's container settings (env, labels, limits,
 * rotated logs, every capability dropped) as a task template, reached by its tasks' own addresses
 * (`dnsrr`: this kernel has no IPVS for a virtual IP). `no-new-privileges` is not in the task template of
 * the engine's API (1.41); the engine sets it for every container instead (dockerd --no-new-privileges).
 *
 * The health check runs inside the task, with the image's sh and curl, and the task's command inside the
 * drain window (DRAIN_WRAPPER). A redeploy is a rolling update: one task at a time, the new one started (and healthy)
 * before the old one stops, and the swarm rolls back by itself when new tasks fail their check.
 */
export function swarmServiceSpec(args: SwarmServiceArgs): Docker.CreateServiceOptions {
  const port = args.settings.port;
  const env = { ...args.settings.env, SERVER_PORT: String(port) };
  const url = `http://127.0.0.1:${port}${args.settings.healthPath ?? DEFAULT_HEALTH_PATH}`;
  const labels = { [LABELS.service]: args.serviceName, [LABELS.dynamic]: 'true', [LABELS.scope]: args.scope, [LABELS.deployment]: args.deploymentId };
  const drainWindow = EDGE_RELEASE_SECONDS + args.drainSeconds;
  const update = { Parallelism: 1, Order: 'start-first', FailureAction: 'rollback', Monitor: 5 * SECOND, MaxFailureRatio: 0 };
  return {
    Name: args.canary ? canarySwarmServiceName(args) : swarmServiceName(args),
    Labels: labels,
    TaskTemplate: {
      ContainerSpec: {
        Image: args.image,
        Command: ['sh', '-c', DRAIN_WRAPPER, String(drainWindow), ...args.command],
        Env: Object.entries(env).map(([key, value]) => `${key}=${value}`),
        Labels: labels,
        CapabilityDrop: ['ALL'],
        // With the default path any HTTP answer will do (curl without -f); with a path of its own, a 2xx. The
        // URL is the script's $0, never part of it. A pass counts after EDGE_SETTLE_SECONDS more, by which time
        // the edge's own check (every second) has passed too: in a rolling update the swarm stops the old
        // task only once the edge can route to the new one. (The engine answers this back as `Healthcheck`.)
        HealthCheck: {
          Test: ['CMD', 'sh', '-c', `curl ${args.settings.healthPath === null ? '-s' : '-fs'} -o /dev/null "$0" && sleep ${EDGE_SETTLE_SECONDS}`, url],
          Interval: SECOND,
          Timeout: (2 + EDGE_SETTLE_SECONDS) * SECOND,
          Retries: 3,
          StartPeriod: args.healthTimeoutSeconds * SECOND,
        },
        StopGracePeriod: (drainWindow + APP_STOP_SECONDS) * SECOND,
      },
      Resources: { Limits: { MemoryBytes: args.memoryMb * 1024 * 1024, NanoCPUs: Math.round(args.cpus * 1e9), Pids: args.pidsLimit } },
      RestartPolicy: { Condition: 'any', Delay: SECOND },
      LogDriver: { Name: 'json-file', Options: { 'max-size': args.log.maxSize, 'max-file': String(args.log.maxFiles) } },
      Networks: [{ Target: args.network }],
    },
    Mode: { Replicated: { Replicas: args.replicas } },
    UpdateConfig: update,
    RollbackConfig: { ...update, FailureAction: 'pause' },
    EndpointSpec: { Mode: 'dnsrr' },
  } as Docker.CreateServiceOptions;
}
