import { deleteInstanceRows, orphanInstanceIds } from '../../../data/deploy/instances';
import { findService } from '../../../data/deploy/registry';
import { DeployDeps } from '../deps';
import { settleCanaryService } from './canary-service';

/**
 * Rows a dead run left of deployments neither serving nor starting now, and a canary swarm service it left;
 * the service's own swarm service is updated by the deploy.
 */
export function removeOrphanSwarmInstances(deps: DeployDeps) {
  return async (input: { serviceName: string; deploymentId: string }) => {
    const service = await findService(deps.db, input.serviceName);
    if (!service) return { removed: 0 };
    // A canary swarm service a dead run left would hold this deploy's update back (its tasks still run).
    await settleCanaryService(deps, service);
    const keep = [input.deploymentId, ...(service.current_deployment_id ? [service.current_deployment_id] : [])];
    const orphans = await orphanInstanceIds(deps.db, { serviceId: service.id, keep });
    await deleteInstanceRows(deps.db, orphans);
    return { removed: orphans.length };
  };
}
