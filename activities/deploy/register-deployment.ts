import { ApplicationFailure } from '@temporalio/activity';
import { DEPLOYMENT_TABLE, findDeployment, INSTANCE_TABLE, SERVICE_TABLE } from '../../data/deploy/registry';
import { StartedInstance } from '../../domain/deploy';
import { DeployDeps } from './deps';

/**
 * The switch: in one transaction the new instances become the ones the gateway routes to, the instances
 * they replace start draining, and the service takes the deploy's image and settings. Repeating it
 * changes nothing more. Answers the replaced instances, for the workflow to stop after draining.
 */
export function registerDeployment({ db }: DeployDeps) {
  return async (input: { deploymentId: string; instances: StartedInstance[] }): Promise<{ replacedInstanceIds: string[] }> => {
    return db.transaction(async (trx) => {
      const deployment = await findDeployment(trx, input.deploymentId);
      if (!deployment) throw ApplicationFailure.nonRetryable(`No deployment ${input.deploymentId}.`, 'NOT_FOUND');
      const service = await trx(SERVICE_TABLE).where({ name: deployment.service_name }).forUpdate().first();
      if (!service) throw ApplicationFailure.nonRetryable(`Service ${deployment.service_name} is not registered.`, 'NOT_FOUND');
      const newIds = input.instances.map((instance) => instance.instanceId);
      const replaced = await trx(INSTANCE_TABLE).where({ service_id: service.id }).whereNotIn('id', newIds).select('id');
      await trx(INSTANCE_TABLE).whereIn('id', replaced.map((row) => row.id)).update({ state: 'DRAINING' });
      for (const instance of input.instances) {
        await trx(INSTANCE_TABLE)
          .insert({ id: instance.instanceId, service_id: service.id, deployment_id: deployment.id, container_id: instance.containerId, address: instance.address, state: 'HEALTHY', last_health_at: trx.fn.now() })
          .onConflict('id')
          .ignore();
      }
      const { settings } = deployment;
      await trx(SERVICE_TABLE).where({ id: service.id }).update({
        kind: deployment.kind,
        image: deployment.image,
        port: settings.port,
        host_port: settings.hostPort,
        env: JSON.stringify(settings.env),
        description: settings.description,
        group: settings.group,
        health_path: settings.healthPath,
        status: 'RUNNING',
        current_deployment_id: deployment.id,
        updated_at: trx.fn.now(),
      });
      await trx(DEPLOYMENT_TABLE)
        .where({ service_name: deployment.service_name, status: 'RUNNING' })
        .whereNot({ id: deployment.id })
        .update({ status: 'SUPERSEDED' });
      return { replacedInstanceIds: replaced.map((row) => row.id as string) };
    });
  };
}
