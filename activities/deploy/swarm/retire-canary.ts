import { findService } from '../../../data/deploy/registry';
import { retireCanary as retireCanaryRow } from '../../../data/deploy/rollouts';
import { DeployDeps } from '../deps';
import { handOverFromCanary } from './canary-service';
import { requireDeployment } from './swarm-services';

/**
 * The promoted canary's swarm service hands its place back to the service's own (handOverFromCanary), then
 * its cluster goes, as under the docker driver.
 */
export function retireSwarmCanary(deps: DeployDeps) {
  return async (input: { deploymentId: string }): Promise<void> => {
    const deployment = await requireDeployment(deps, input.deploymentId);
    const service = await findService(deps.db, deployment.service_name);
    if (service?.current_deployment_id === deployment.id) await handOverFromCanary(deps, { deployment, service });
    await retireCanaryRow(deps.db, input);
  };
}
