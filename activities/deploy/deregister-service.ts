import { deregisterServiceInstances } from '../../data/deploy/instances';
import { DeployDeps } from './deps';
import { untilEdgeDrained, untilEdgeRoutes } from './edge-routing';

/**
 * Undeploy's first step: the gateway stops routing to the service, confirmed at the edge, and the requests it
 * already sent there end (for at most DEPLOY_DRAIN_SECONDS) before any container stops.
 */
export function deregisterService({ db, config }: DeployDeps) {
  return async (input: { serviceName: string }): Promise<void> => {
    await deregisterServiceInstances(db, input.serviceName);
    await untilEdgeRoutes(config.edgeAdminUrl, { serviceName: input.serviceName, emptied: true });
    await untilEdgeDrained(config.edgeAdminUrl, { serviceName: input.serviceName, withinMs: config.deployDrainSeconds * 1000 });
  };
}
