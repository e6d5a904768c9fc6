import { deleteServiceRow } from '../../data/deploy/instances';
import { DeployDeps } from './deps';
import { untilEdgeForgets } from './edge-routing';

/**
 * Undeploy's last step: the registry forgets the service (its deploy history stays), and the step ends once
 * the edge no longer routes its slug, so its route answers 404 when the undeploy has finished. A retry finds
 * the row gone and has no slug to wait on (the control plane drops the route within ten seconds anyway).
 */
export function deleteService({ db, config }: DeployDeps) {
  return async (input: { serviceName: string }): Promise<void> => {
    const deleted = await deleteServiceRow(db, input.serviceName);
    if (deleted) await untilEdgeForgets(config.edge.adminUrl, { serviceName: input.serviceName, slug: deleted.slug });
  };
}
