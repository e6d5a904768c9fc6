import { servicesWithOpenDeployments, settleDeadDeploys } from '../../data/deploy/dead-deploys';
import { reconcilableServiceNames } from '../../data/deploy/instances';
import { findDeployment } from '../../data/deploy/registry';
import { LABELS, labelFilters } from '../../data/deploy/labels';
import { check } from '../../domain/workflow-input';
import { imageContainerPrefix } from './build-service-image';
import { DeployDeps } from './deps';
import { removeContainers } from './remove-containers';

/** Removes what a deployment whose run died left on the engine (the driver's part). */
export type RemoveLeftovers = (deploymentId: string) => Promise<void>;

/** The docker driver's leftovers of a deployment: its containers, found by their label. */
export function removeDeploymentContainers({ docker, config }: DeployDeps): RemoveLeftovers {
  return async (deploymentId) => {
    const left = await docker.listContainers({ all: true, filters: labelFilters(config.deploy.scope, 'deployment', deploymentId) });
    await removeContainers(
      docker,
      left.map((container) => container.Id),
    );
  };
}

/**
 * Removes the containers JAR images were made from (decision 032) whose deployment is no longer deploying:
 * each was left by an image step's attempt that no later attempt followed. One whose deployment still
 * deploys may be its image step's, at work.
 */
async function removeStrayImageContainers({ db, docker, config }: DeployDeps): Promise<void> {
  const found = await docker.listContainers({
    all: true,
    filters: { label: [`${LABELS.scope}=${config.deploy.scope}`], name: [imageContainerPrefix(config.deploy.scope)] },
  });
  const stray: string[] = [];
  for (const container of found) {
    // Exactly `/{scope}-image-{deployment}`, and no instance of a service (an instance carries its service's
    // label, and its name ends in eight characters of its id: a service named `image` has `{scope}-image-…`).
    const deploymentId = container.Labels[LABELS.deployment];
    if (container.Labels[LABELS.service] !== undefined || !container.Names.includes(`/${imageContainerPrefix(config.deploy.scope)}${deploymentId}`)) continue;
    // A label that names no deployment (no UUID) is not looked up: the container is a stray.
    const deployment = check.uuid('deployment', deploymentId) === null ? await findDeployment(db, deploymentId) : undefined;
    if (deployment?.status !== 'DEPLOYING') stray.push(container.Id);
  }
  await removeContainers(docker, stray);
}

/**
 * Dynamic services that are running and not in the middle of a deploy: the reconcile's work list. A deploy
 * whose run died unfinished is settled first (recorded FAILED, what it left removed), so it does not keep
 * its service out of the list; the containers that images were made from and that no attempt removed go too.
 */
export function listReconcilableServices(deps: DeployDeps, removeLeftovers: RemoveLeftovers) {
  const { db, runStatusOf } = deps;
  return async (): Promise<string[]> => {
    for (const serviceName of await servicesWithOpenDeployments(db)) {
      for (const deploymentId of await settleDeadDeploys(db, { serviceName, runStatusOf })) await removeLeftovers(deploymentId);
    }
    await removeStrayImageContainers(deps);
    return reconcilableServiceNames(db);
  };
}
