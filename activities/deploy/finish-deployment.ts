import { discardUploadedJar } from '../../data/deploy/jar-uploads';
import { recordDeployFinished } from '../../data/deploy/registry';
import { DeployDeps } from './deps';

/** The deploy reached RUNNING: record it, and drop the uploaded JAR (its image holds it now). */
export function finishDeployment({ db, config }: DeployDeps) {
  return async (input: { deploymentId: string; at: string }): Promise<void> => {
    await recordDeployFinished(db, input);
    await discardUploadedJar({ dataDir: config.dataDir, deploymentId: input.deploymentId });
  };
}
