import { discardUploadedJar } from '../../data/deploy/jar-uploads';
import { recordDeployFailure } from '../../data/deploy/registry';
import { DeployError } from '../../domain/deploy';
import { DeployDeps } from './deps';

/**
 * Records a failed deploy after its undo steps ran. A service that never ran leaves no registry row; one
 * that did keeps serving its previous version.
 */
export function failDeployment({ db, config }: DeployDeps) {
  return async (input: { deploymentId: string; at: string; error: DeployError }): Promise<void> => {
    await recordDeployFailure(db, input);
    await discardUploadedJar({ dataDir: config.dataDir, deploymentId: input.deploymentId });
  };
}
