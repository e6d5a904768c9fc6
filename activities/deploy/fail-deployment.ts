import { discardUploadedJar } from '../../data/deploy/jar-uploads';
import { DEPLOYMENT_TABLE, findDeployment, SERVICE_TABLE } from '../../data/deploy/registry';
import { DeployError } from '../../workflows/deploy/definitions';
import { DeployDeps } from './deps';

/**
 * Records a failed deploy after its undo steps ran. A service that never ran leaves no registry row; one
 * that did keeps serving its previous version.
 */
export function failDeployment({ db, config }: DeployDeps) {
  return async (input: { deploymentId: string; at: string; error: DeployError }): Promise<void> => {
    await db.transaction(async (trx) => {
      const deployment = await findDeployment(trx, input.deploymentId);
      if (!deployment) return;
      const event = { at: input.at, stage: 'FAILED', message: `${input.error.stage}: ${input.error.reason}` };
      await trx(DEPLOYMENT_TABLE)
        .where({ id: deployment.id, status: 'DEPLOYING' })
        .update({ status: 'FAILED', stage: 'FAILED', error: JSON.stringify(input.error), finished_at: trx.fn.now(), events: trx.raw('events || ?::jsonb', [JSON.stringify([event])]) });
      const service = await trx(SERVICE_TABLE).where({ name: deployment.service_name }).forUpdate().first();
      if (!service) return;
      if (service.current_deployment_id === null) await trx(SERVICE_TABLE).where({ id: service.id }).delete();
      else if (service.status === 'DEPLOYING') await trx(SERVICE_TABLE).where({ id: service.id }).update({ status: 'RUNNING', updated_at: trx.fn.now() });
    });
    await discardUploadedJar({ dataDir: config.dataDir, deploymentId: input.deploymentId });
  };
}
