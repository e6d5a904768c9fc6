import { servicesWithOpenDeployments, settleDeadDeploys } from '../../data/deploy/dead-deploys';
import { reconcilableServiceNames } from '../../data/deploy/instances';
import { labelFilters } from '../../data/deploy/labels';
import { DeployDeps } from './deps';
import { removeContainers } from './remove-containers';

/**
 * Dynamic services that are running and not in the middle of a deploy: the reconcile's work list. A deploy
 * whose run died unfinished is settled first (recorded FAILED, its containers removed), so it does not keep
 * its service out of the list.
 */
export function listReconcilableServices({ db, docker, config, runStatusOf }: DeployDeps) {
  return async (): Promise<string[]> => {
    for (const serviceName of await servicesWithOpenDeployments(db)) {
      for (const deploymentId of await settleDeadDeploys(db, { serviceName, runStatusOf })) {
        const left = await docker.listContainers({ all: true, filters: labelFilters(config.deployScope, 'deployment', deploymentId) });
        await removeContainers(docker, left.map((container) => container.Id));
      }
    }
    return reconcilableServiceNames(db);
  };
}
