/** The deploy vocabulary every layer shares: names, slugs, statuses, stages, limits. Imports only its own layer. */
import { check, firstProblem, Problem } from './workflow-input';

export const SERVICE_NAME_PATTERN = '^[a-z][a-z0-9-]{1,62}$';

/** The slug a service is routed under: its name with one trailing `-service` removed, lower-cased. */
export function slugOf(serviceName: string): string {
  return serviceName.replace(/-service$/, '').toLowerCase();
}

/** The platform's own modules; registered as CORE services at start-up. */
export const CORE_MODULES = ['settings', 'assets', 'infra', 'email', 'workflow', 'content', 'forms', 'integration', 'directory'] as const;

/** Slugs the gateway never hands to a deployed service: the modules' and the platform's own routes (`temporal`: the codec endpoint of Temporal's Web UI). */
export const RESERVED_SLUGS: readonly string[] = [...CORE_MODULES, 'public', 'docs', 'temporal'];

export const MAX_INSTANCES = 20;
/** Images of this many successful deploys of a service are kept for rollback. */
export const KEPT_IMAGES = 5;
export const DEFAULT_HEALTH_PATH = '/actuator/health';

export type ServiceKind = 'CORE' | 'JAR' | 'IMAGE';
export type ServiceStatus = 'DEPLOYING' | 'RUNNING' | 'DEGRADED' | 'FAILED' | 'UNDEPLOYING';
export type DeploymentStatus = 'DEPLOYING' | 'RUNNING' | 'SUPERSEDED' | 'FAILED';
export type DeployStage = 'VALIDATED' | 'BUILDING_IMAGE' | 'STARTING' | 'HEALTH_CHECK' | 'REGISTERING' | 'RUNNING' | 'FAILED';

export interface DeployEvent {
  at: string;
  stage: DeployStage;
  message: string;
}

export interface DeployError {
  /** The stage that failed. */
  stage: DeployStage;
  reason: string;
  /** The failing container's last log lines, secret values masked. */
  lastLogLines: string[];
}

/** A started container, as activities hand it on. */
export interface StartedInstance {
  instanceId: string;
  containerId: string;
  /** `ip:port` on the deploy network. */
  address: string;
}

/** The failure type of an instance that exited or never became healthy; its details carry the log lines. */
export const INSTANCE_UNHEALTHY = 'INSTANCE_UNHEALTHY';

/** The instance timings every deploy workflow takes (the bounds of DEPLOY_HEALTH_TIMEOUT_SECONDS and DEPLOY_DRAIN_SECONDS). */
const timingProblems = (given: Record<string, unknown>): Problem[] => [
  check.integer('healthTimeoutSeconds', given.healthTimeoutSeconds, 1, 3600),
  check.integer('drainSeconds', given.drainSeconds, 1, 600),
];

/** Why a deploy, scale, undeploy or reconcile run's input is refused, or null. */
export const deployInputProblem = (input: unknown): Problem =>
  firstProblem(input, (given) => [
    check.uuid('deploymentId', given.deploymentId),
    check.pattern('serviceName', given.serviceName, SERVICE_NAME_PATTERN),
    ...timingProblems(given),
  ]);
export const scaleInputProblem = (input: unknown): Problem =>
  firstProblem(input, (given) => [check.pattern('serviceName', given.serviceName, SERVICE_NAME_PATTERN), ...timingProblems(given)]);
export const undeployInputProblem = (input: unknown): Problem =>
  firstProblem(input, (given) => [check.pattern('serviceName', given.serviceName, SERVICE_NAME_PATTERN)]);
export const reconcileInputProblem = (input: unknown): Problem => firstProblem(input, timingProblems);

/** Where the edge reaches something: an instance of a service, the API behind it, its own listener. */
export interface EdgeInstance {
  host: string;
  port: number;
}

/** A deployed service as the edge routes it, from the registry. */
export interface EdgeService {
  name: string;
  slug: string;
  /** The path the active health checks call. */
  healthPath: string;
  /** Every registered instance: the health checks decide which get traffic. */
  instances: EdgeInstance[];
}
