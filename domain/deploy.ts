/** The deploy vocabulary every layer shares: names, slugs, statuses, stages, limits. Imports only its own layer. */
import { check, firstProblem, Problem } from './workflow-input';
import { Refusal } from './refusal';

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
/**
 * REVERTED: a rollout whose canary failed its judgement (or was aborted); ROLLED_BACK: an update the swarm
 * rolled back by itself. In both the previous version kept serving.
 */
export type DeploymentStatus = 'DEPLOYING' | 'RUNNING' | 'SUPERSEDED' | 'FAILED' | 'REVERTED' | 'ROLLED_BACK';
/** The failure type of an update the swarm rolled back: the deploy ends ROLLED_BACK, not FAILED. */
export const ROLLED_BACK_BY_SWARM = 'ROLLED_BACK_BY_SWARM';
export type DeployStage = 'VALIDATED' | 'BUILDING_IMAGE' | 'STARTING' | 'HEALTH_CHECK' | 'CANARY' | 'REGISTERING' | 'RUNNING' | 'FAILED' | 'REVERTED';

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

/** What one instance of a service may use: memory (MiB, no swap beyond it), CPUs, and processes. */
export interface ServiceLimits {
  memoryMb: number;
  cpus: number;
  pids: number;
}
export const LIMIT_BOUNDS: Record<keyof ServiceLimits, { min: number; max: number }> = {
  memoryMb: { min: 32, max: 65536 },
  cpus: { min: 0.05, max: 64 },
  pids: { min: 16, max: 65536 },
};

/** Why limits are not changed in place under the swarm driver: its tasks are replaced to take new ones. */
export const LIMITS_UNDER_SWARM = 'Limits change with a redeploy under the swarm driver.';

/** Why a limits change's input is refused, or null: a service's name, its limits within bounds, and who asked. */
export const limitsInputProblem = (input: unknown): Problem =>
  firstProblem(input, (given) => {
    const limits = (given.limits ?? {}) as Record<string, unknown>;
    return [
      check.pattern('serviceName', given.serviceName, SERVICE_NAME_PATTERN),
      check.object(given.limits),
      check.integer('limits.memoryMb', limits.memoryMb, LIMIT_BOUNDS.memoryMb.min, LIMIT_BOUNDS.memoryMb.max),
      check.number('limits.cpus', limits.cpus, LIMIT_BOUNDS.cpus.min, LIMIT_BOUNDS.cpus.max),
      check.integer('limits.pids', limits.pids, LIMIT_BOUNDS.pids.min, LIMIT_BOUNDS.pids.max),
      check.text('by', given.by, 200),
    ];
  });

/**
 * The limits an instance of a deployment starts with: the current deployment's (a scale, a replacement) are
 * the service's own; a new deployment's are those it was asked with, else the service's; else the defaults.
 */
export function effectiveLimits(args: {
  service: ServiceLimits | null;
  deployment: ServiceLimits | undefined;
  isCurrent: boolean;
  defaults: ServiceLimits;
}): ServiceLimits {
  return (args.isCurrent ? args.service : (args.deployment ?? args.service)) ?? args.defaults;
}

/** What became of a service's instances, as its history of events says. */
export type ServiceEventKind = 'STARTED' | 'HEALTHY' | 'UNHEALTHY' | 'EXITED' | 'OOM_KILLED' | 'RESTARTED' | 'ROLLED_BACK' | 'LIMITS_CHANGED';
export interface ServiceEvent {
  kind: ServiceEventKind;
  instanceId: string | null;
  detail: string;
  /** Makes recording it again change nothing (a retried activity, a second survey of the same death). */
  dedupeKey: string;
}

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
  /** A rollout's new version beside them, on a cluster of its own (checked on its own health path), and its share of requests in percent (0 to 100). */
  canary?: { instances: EdgeInstance[]; weight: number; healthPath: string };
  /** The hostnames it answers on besides its path (domain/service-domains.ts). */
  domains?: string[];
}

/**
 * A canary rollout, as a redeploy asks for it: the new version takes each step's share of requests in turn
 * (percent, ascending, the last 100); after each pause the step is judged from the edge's statistics.
 */
export interface RolloutPlan {
  steps: number[];
  pauseSeconds: number;
  /** The highest share of the canary's answers that may be 5xx. */
  maxErrorRate: number;
  /** The slowest p99 the canary may show, in ms; null: latency is not judged. */
  maxP99Ms: number | null;
  /** Requests the canary must have answered in a step before it is judged. */
  minRequests: number;
}

export const MAX_ROLLOUT_STEPS = 10;
/** A step with too few requests is judged again after each further pause, this many times, and then reverts. */
export const ROLLOUT_WAITS_FOR_TRAFFIC = 10;

/** Why a rollout plan is refused, or null. */
export const rolloutProblem = (rollout: unknown): Problem =>
  firstProblem(rollout, (given) => {
    const steps = given.steps;
    const stepsProblem =
      !Array.isArray(steps) || steps.length === 0 || steps.length > MAX_ROLLOUT_STEPS
        ? `steps must be a list of 1 to ${MAX_ROLLOUT_STEPS} shares`
        : steps.some((step, at) => !Number.isInteger(step) || step < 1 || step > 100 || (at > 0 && step <= steps[at - 1]))
          ? 'steps must be whole percentages from 1 to 100, each above the one before'
          : steps[steps.length - 1] !== 100
            ? 'steps must end at 100'
            : null;
    return [
      stepsProblem,
      check.integer('pauseSeconds', given.pauseSeconds, 1, 3600),
      typeof given.maxErrorRate === 'number' && given.maxErrorRate >= 0 && given.maxErrorRate <= 1 ? null : 'maxErrorRate must be a number from 0 to 1',
      given.maxP99Ms === null || given.maxP99Ms === undefined ? null : check.integer('maxP99Ms', given.maxP99Ms, 1, 600000),
      check.integer('minRequests', given.minRequests, 1, 1000000),
    ];
  });

/** A rollout compares the new version with the running one, so a service with none running cannot have one. */
export function rolloutWithoutBaseRefusal(serviceName: string, hasRunningVersion: boolean): Refusal | null {
  if (hasRunningVersion) return null;
  return {
    code: 'VALIDATION_FAILED',
    why: 'A rollout needs a running version to compare the new one with.',
    fields: [{ path: 'body.rollout', message: `${serviceName} has no running version: deploy it first, then redeploy with a rollout` }],
  };
}

/** What Envoy counted on one version's cluster since it created it: the raw material of a canary's judgement. */
export interface VersionCounters {
  completed: number;
  errors5xx: number;
  /** The latency histogram, cumulative: [upper bound in ms, requests at or under it], ascending, finite bounds only (these travel as JSON). */
  latencyBuckets: Array<[number, number]>;
  /** Every request the histogram counted (its +Inf bucket). */
  latencyCount: number;
  healthyHosts: number;
  hosts: number;
}

/**
 * The 99th percentile of the latencies counted between two readings of a histogram, interpolated inside its
 * bucket as Prometheus' histogram_quantile does; the highest bound when it lies past every bucket; null with
 * no request between them.
 */
export function p99Between(
  before: Pick<VersionCounters, 'latencyBuckets' | 'latencyCount'>,
  after: Pick<VersionCounters, 'latencyBuckets' | 'latencyCount'>,
): number | null {
  const earlier = new Map(before.latencyBuckets);
  const total = after.latencyCount - before.latencyCount;
  if (total <= 0) return null;
  const rank = 0.99 * total;
  let lower = 0;
  let below = 0;
  for (const [bound, cumulative] of after.latencyBuckets) {
    const count = cumulative - (earlier.get(bound) ?? 0);
    if (count >= rank) return lower + ((bound - lower) * (rank - below)) / Math.max(count - below, 1);
    lower = bound;
    below = count;
  }
  return lower;
}

/** One version's figures over a step: the difference of two readings of its counters, and its hosts' health now. */
export function figuresBetween(before: VersionCounters, after: VersionCounters): VersionFigures {
  // A cluster (or an Envoy) created anew between the readings counts from zero: the later reading is the whole step.
  const restarted = after.completed < before.completed || after.errors5xx < before.errors5xx || after.latencyCount < before.latencyCount;
  const from = restarted ? { completed: 0, errors5xx: 0, latencyBuckets: [] as Array<[number, number]>, latencyCount: 0 } : before;
  const requests = after.completed - from.completed;
  const errors5xx = Math.max(0, after.errors5xx - from.errors5xx);
  return {
    requests,
    errors5xx,
    errorRate: requests > 0 ? errors5xx / requests : 0,
    p99Ms: p99Between(from, after),
    healthyHosts: after.healthyHosts,
    hosts: after.hosts,
  };
}

/** One version's answers through the edge during a step: counted by Envoy on its cluster. */
export interface VersionFigures {
  requests: number;
  errors5xx: number;
  /** errors5xx / requests; 0 with no request. */
  errorRate: number;
  /** Estimated from Envoy's latency histogram; null with no request. */
  p99Ms: number | null;
  /** Its hosts that pass the edge's health checks, of all its hosts, when judged. */
  healthyHosts: number;
  hosts: number;
}

/** Where a canary rollout stands: its step and share, and the figures it was last judged on. */
export interface RolloutState {
  steps: number[];
  /** The step being run (0-based); -1 before the canary takes requests. */
  step: number;
  weight: number;
  canary: VersionFigures | null;
  stable: VersionFigures | null;
  verdict: 'PASS' | 'FAIL' | 'WAIT' | 'PROMOTED' | 'ABORTED' | null;
  reasons: string[];
  at: string;
}

export interface StepJudgement {
  verdict: 'PASS' | 'FAIL' | 'WAIT';
  /** What failed the step, or why it waits: each a sentence with the figure and its threshold. */
  reasons: string[];
}

/** The rule of a canary step: its 5xx ratio, its p99 and its health checks against the plan's thresholds. */
export function judgeCanaryStep(plan: RolloutPlan, canary: VersionFigures): StepJudgement {
  // A failing health check fails the step at once; rates are only judged over enough requests to mean something.
  if (canary.healthyHosts < canary.hosts)
    return { verdict: 'FAIL', reasons: [`${canary.hosts - canary.healthyHosts} of ${canary.hosts} new instance(s) fail the edge's health check`] };
  if (canary.requests < plan.minRequests)
    return { verdict: 'WAIT', reasons: [`${canary.requests} request(s), fewer than the ${plan.minRequests} needed to judge`] };
  // Envoy's histograms reach its admin at its flush, after its counters: latency is judged once it has them.
  if (plan.maxP99Ms !== null && canary.p99Ms === null)
    return { verdict: 'WAIT', reasons: ["the edge's latency histogram has not counted the step's requests yet"] };
  const failures: string[] = [];
  if (canary.errorRate > plan.maxErrorRate)
    failures.push(`5xx ratio ${canary.errorRate.toFixed(3)} (${canary.errors5xx} of ${canary.requests}) above ${plan.maxErrorRate}`);
  if (plan.maxP99Ms !== null && canary.p99Ms !== null && canary.p99Ms > plan.maxP99Ms)
    failures.push(`p99 ${Math.round(canary.p99Ms)} ms above ${plan.maxP99Ms} ms`);
  return failures.length > 0 ? { verdict: 'FAIL', reasons: failures } : { verdict: 'PASS', reasons: [] };
}

/**
 * Who hears of a service's deploy that ends FAILED, REVERTED or ROLLED_BACK: the holders of a role in a site,
 * addresses named outright, or both. The platform's email channels carry the notice, in its own template; its send logs are the site's.
 */
export interface DeployNotify {
  siteId: string;
  role: string | null;
  emails: string[];
}

/** At most this many addresses are told of a service's deploys: a list of owners, not a mailing list. */
export const MAX_NOTIFY_EMAILS = 20;

/** The deploy outcomes a service's owners are told of. */
export const NOTICE_OUTCOMES = ['FAILED', 'REVERTED', 'ROLLED_BACK'] as const;
export type NoticeOutcome = (typeof NOTICE_OUTCOMES)[number];

/** Why a notify setting cannot be kept, or null: it must name someone. */
export function deployNotifyProblem(notify: DeployNotify): string | null {
  if (!notify.role && notify.emails.length === 0) return 'name a role, at least one address, or both';
  return null;
}
