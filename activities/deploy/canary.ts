import {
  registerCanary as registerCanaryRows,
  recordRolloutReverted,
  recordRolloutState as recordRolloutStateRow,
  retireCanary as retireCanaryRow,
  setCanaryWeight,
} from '../../data/deploy/rollouts';
import { findDeployment, findService } from '../../data/deploy/registry';
import { edgeVersionCounters, EdgeVersion } from '../../edge/admin';
import {
  figuresBetween,
  judgeCanaryStep as judge,
  RolloutPlan,
  RolloutState,
  StartedInstance,
  StepJudgement,
  VersionCounters,
  VersionFigures,
} from '../../domain/deploy';
import { finalFailure, retryableFailure } from '../failures';
import { discardUploadedJar } from '../../data/deploy/jar-uploads';
import { refusalsAreFinal } from '../final-refusals';
import { DeployDeps } from './deps';
import { untilEdgeRoutes, untilEdgeShares } from './edge-routing';

/** A canary rollout's activities: the new version beside the current one, its share, its judgement, its end. */

/**
 * The new instances join the edge as the service's canary, with no share yet; answers once the edge routes
 * to them on the canary's cluster.
 *
 * A canary that ended moments ago stays at the edge for a few seconds (edge/files.ts), with its hosts.
 * The engine may give a new container the address of an old one, and the edge would then treat the new
 * instance as that old host: a health check of the old container, still in flight, fails it a moment
 * later, and once the canary has every request, requests get 503. So the old hosts are removed first,
 * and the new ones are added fresh and checked before they count as routed.
 */
export function registerCanary({ db, config }: DeployDeps) {
  return async (input: { deploymentId: string; instances: StartedInstance[] }): Promise<void> => {
    const addresses = input.instances.map((instance) => instance.address);
    const deployment = await findDeployment(db, input.deploymentId);
    const service = deployment ? await findService(db, deployment.service_name) : undefined;
    // Not on a retry: by then the hosts at those addresses are this canary's own.
    if (service && service.canary_deployment_id !== input.deploymentId) {
      await untilEdgeRoutes(config.edge.adminUrl, { serviceName: service.name, version: 'canary', gone: addresses });
    }
    const { serviceName } = await refusalsAreFinal(() => registerCanaryRows(db, input));
    await untilEdgeRoutes(config.edge.adminUrl, { serviceName, version: 'canary', routed: addresses });
  };
}

/** Gives the canary `weight` percent of the service's requests; answers once the edge's routes do. */
export function shareWithCanary({ db, config }: DeployDeps) {
  return async (input: { deploymentId: string; serviceName: string; weight: number }): Promise<void> => {
    await setCanaryWeight(db, input);
    await untilEdgeShares(config.edge.adminUrl, { serviceName: input.serviceName, weight: input.weight });
  };
}

/** What Envoy has counted so far on both versions' clusters: a step's starting point. */
export function readVersionCounters({ config }: DeployDeps) {
  return async (input: { serviceName: string }): Promise<Record<EdgeVersion, VersionCounters>> => {
    if (!config.edge.adminUrl) throw finalFailure('EDGE_STATS_UNAVAILABLE', "A rollout is judged on the edge's statistics, and EDGE_ADMIN_URL is not set.");
    const counters = await edgeVersionCounters(config.edge.adminUrl, input.serviceName);
    if (!counters) throw retryableFailure('EDGE_STATS_UNAVAILABLE', `The edge's admin at ${config.edge.adminUrl} does not answer.`);
    return counters;
  };
}

export interface StepFigures {
  canary: VersionFigures;
  stable: VersionFigures;
  judgement: StepJudgement;
}

/** Judges a step: both versions' figures since `since`, and the canary's against the plan's thresholds. */
export function judgeCanaryStep(deps: DeployDeps) {
  const read = readVersionCounters(deps);
  return async (input: { serviceName: string; rollout: RolloutPlan; since: Record<EdgeVersion, VersionCounters> }): Promise<StepFigures> => {
    const now = await read({ serviceName: input.serviceName });
    const canary = figuresBetween(input.since.canary, now.canary);
    return { canary, stable: figuresBetween(input.since.current, now.current), judgement: judge(input.rollout, canary) };
  };
}

/** Where the rollout stands, for the API and the console. */
export function recordRolloutState({ db }: DeployDeps) {
  return async (input: { deploymentId: string; state: RolloutState }): Promise<void> => recordRolloutStateRow(db, input);
}

/** The rollout reverted: the deployment ends REVERTED with its reason; the service has no canary any more. */
export function finishRevert({ db, config }: DeployDeps) {
  return async (input: { deploymentId: string; at: string; reason: string }): Promise<void> => {
    await recordRolloutReverted(db, input);
    await discardUploadedJar({ dataDir: config.dataDir, deploymentId: input.deploymentId });
  };
}

/** The promoted canary's own cluster goes, now that the service's cluster routes to its instances. */
export function retireCanary({ db }: DeployDeps) {
  return async (input: { deploymentId: string }): Promise<void> => retireCanaryRow(db, input);
}
