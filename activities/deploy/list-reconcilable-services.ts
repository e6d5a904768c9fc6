import { servicesWithOpenDeployments, settleDeadDeploys } from '../../data/deploy/dead-deploys';
import { reconcilableServiceNames } from '../../data/deploy/instances';
import { labelFilters } from '../../data/deploy/labels';
import { DeployDeps } from './deps';
import { removeContainers } from './remove-containers';

/** Removes what a deployment whose run died left on the engine (the driver's part). */
export type RemoveLeftovers = (deploymentId: string) => Promise<void>;

/** The docker driver's leftovers of a deployment: its containers, found by their label. */
export function removeDeploymentContainers({ docker, config }: DeployDeps): RemoveLeftovers {
  return async (deploymentId) => {
    const left = await docker.listContainers({ all: true, filters: labelFilters(config.deployScope, 'deployment', deploymentId) });
    await removeContainers(
      docker,
      left.map((container) => container.Id),
    );
  };
}

/**
 * Dynamic services that are running and not in the middle of a deploy: the reconcile's work list. A deploy
 * whose run died unfinished is settled first (recorded FAILED, what it left removed), so it does not keep
 * its service out of the list.
 */
export function listReconcilableServices({ db, runStatusOf }: DeployDeps, removeLeftovers: RemoveLeftovers) {
  return async (): Promise<string[]> => {
    for (const serviceName of await servicesWithOpenDeployments(db)) {
      for (const deploymentId of await settleDeadDeploys(db, { serviceName, runStatusOf })) await removeLeftovers(deploymentId);
    }
    return reconcilableServiceNames(db);
  };
}
