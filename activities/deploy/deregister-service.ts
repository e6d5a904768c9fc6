import { deregisterServiceInstances } from '../../data/deploy/instances';
import { DeployDeps } from './deps';
import { untilEdgeDrained, untilEdgeRoutes } from './edge-routing';

/**
 * The longest the drain waits inside this step: with up to 15 s for the edge to let go, it stays within the
 * step's minute, so a long DEPLOY_DRAIN_SECONDS cannot time every attempt out and leave the undeploy failed.
 */
const LONGEST_DRAIN_MS = 30000;

/**
 * Undeploy's first step: the gateway stops routing to the service, confirmed at the edge, and the requests it
 * already sent there end (for at most DEPLOY_DRAIN_SECONDS, and 30 s) before any container stops.
 */
export function deregisterService({ db, config }: DeployDeps) {
  return async (input: { serviceName: string }): Promise<void> => {
    await deregisterServiceInstances(db, input.serviceName);
    await untilEdgeRoutes(config.edge.adminUrl, { serviceName: input.serviceName, emptied: true });
    await untilEdgeDrained(config.edge.adminUrl, { serviceName: input.serviceName, withinMs: Math.min(config.deploy.drainSeconds * 1000, LONGEST_DRAIN_MS) });
  };
}
