import { discardUploadedJar } from '../../data/deploy/jar-uploads';
import { recordDeployFailure } from '../../data/deploy/registry';
import { DeployError, DeploymentStatus } from '../../domain/deploy';
import { recordServiceEvents } from '../../data/deploy/events';
import { findDeployment } from '../../data/deploy/registry';
import { DeployDeps } from './deps';

/**
 * Records a failed deploy after its undo steps ran. A service that never ran leaves no registry row; one
 * that did keeps serving its previous version.
 */
export function failDeployment({ db, config }: DeployDeps) {
  return async (input: {
    deploymentId: string;
    at: string;
    error: DeployError;
    status?: Extract<DeploymentStatus, 'FAILED' | 'ROLLED_BACK'>;
  }): Promise<void> => {
    await recordDeployFailure(db, input);
    const deployment = await findDeployment(db, input.deploymentId);
    if (input.status === 'ROLLED_BACK' && deployment) {
      await recordServiceEvents(db, deployment.service_name, [
        { kind: 'ROLLED_BACK', instanceId: null, detail: input.error.reason, dedupeKey: `rolled-back:${input.deploymentId}` },
      ]);
    }
    await discardUploadedJar({ dataDir: config.dataDir, deploymentId: input.deploymentId });
  };
}
