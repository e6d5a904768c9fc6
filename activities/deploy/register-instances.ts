import { ApplicationFailure } from '@temporalio/activity';
import { findDeployment, INSTANCE_TABLE, SERVICE_TABLE } from '../../data/deploy/registry';
import { StartedInstance } from '../../domain/deploy';
import { DeployDeps } from './deps';

/** Adds healthy instances to the ones the gateway routes to (scale up, replacements); repeating adds nothing. */
export function registerInstances({ db }: DeployDeps) {
  return async (input: { deploymentId: string; instances: StartedInstance[] }): Promise<void> => {
    const deployment = await findDeployment(db, input.deploymentId);
    if (!deployment) throw ApplicationFailure.nonRetryable(`No deployment ${input.deploymentId}.`, 'NOT_FOUND');
    const service = await db(SERVICE_TABLE).where({ name: deployment.service_name }).first('id');
    if (!service) throw ApplicationFailure.nonRetryable(`Service ${deployment.service_name} is not registered.`, 'NOT_FOUND');
    for (const instance of input.instances) {
      await db(INSTANCE_TABLE)
        .insert({ id: instance.instanceId, service_id: service.id, deployment_id: deployment.id, container_id: instance.containerId, address: instance.address, state: 'HEALTHY', last_health_at: db.fn.now() })
        .onConflict('id')
        .ignore();
    }
  };
}
