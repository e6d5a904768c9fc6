import { deleteInstanceRows, orphanInstanceIds } from '../../data/deploy/instances';
import { findService } from '../../data/deploy/registry';
import { LABELS, serviceFilters } from '../../data/deploy/labels';
import { DeployDeps } from './deps';
import { removeContainers } from './remove-containers';

/**
 * Removes what a deploy run that died unfinished (terminated, cancelled, timed out) left of a service:
 * containers and registry rows of any deployment other than the one serving (`current_deployment_id`)
 * and the one starting now. Only one `deploy:{name}` runs at a time, so nothing else of the service can
 * be half-made meanwhile; scale and reconcile start instances of the serving deployment only.
 */
export function removeOrphanInstances({ db, docker, config }: DeployDeps) {
  return async (input: { serviceName: string; deploymentId: string }): Promise<{ removed: number }> => {
    const service = await findService(db, input.serviceName);
    const keep = [input.deploymentId, ...(service?.current_deployment_id ? [service.current_deployment_id] : [])];
    const containers = await docker.listContainers({ all: true, filters: serviceFilters(config.deploy.scope, input.serviceName) });
    const orphans = containers.filter((container) => !keep.includes(container.Labels[LABELS.deployment]));
    if (service) await deleteInstanceRows(db, await orphanInstanceIds(db, { serviceId: service.id, keep }));
    await removeContainers(
      docker,
      orphans.map((container) => container.Id),
    );
    return { removed: orphans.length };
  };
}
