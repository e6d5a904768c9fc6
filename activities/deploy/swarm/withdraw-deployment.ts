import { LABELS } from '../../../data/deploy/labels';
import { findService } from '../../../data/deploy/registry';
import { DeployDeps } from '../deps';
import { findSwarmService, removeSwarmService, requireDeployment } from './swarm-services';
import { names, syncService } from './task-instances';

/**
 * Takes back a deployment that is not serving (a deploy that failed, or whose run died): a swarm service
 * still on it goes back to the version before it (the swarm's rollback), or, on a first deploy, away. One
 * the swarm already rolled back, or one serving this deployment (a scale), is left as it is.
 */
export async function withdrawDeployment(deps: DeployDeps, deploymentId: string): Promise<void> {
  const deployment = await requireDeployment(deps, deploymentId);
  const service = await findService(deps.db, deployment.service_name);
  const { swarmService, canaryService } = names(deps, deployment.service_name);
  // A canary rollout's version ran in a swarm service of its own: withdrawing it removes that service.
  const canary = await findSwarmService(deps.docker, canaryService);
  if (canary && canary.Spec.Labels?.[LABELS.deployment] === deployment.id && service?.current_deployment_id !== deployment.id)
    await removeSwarmService(deps.docker, canaryService);
  const existing = await findSwarmService(deps.docker, swarmService);
  if (existing && existing.Spec.Labels?.[LABELS.deployment] === deployment.id && service?.current_deployment_id !== deployment.id) {
    if (existing.PreviousSpec) await deps.docker.getService(existing.ID).update({ ...existing.Spec, version: existing.Version.Index, rollback: 'previous' });
    // The swarm removes the tasks' containers after it forgets the service: the undo ends when they are gone.
    else await removeSwarmService(deps.docker, swarmService);
  }
  await syncService(deps, deployment.service_name);
}
