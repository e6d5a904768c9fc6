import { discardUploadedJar } from '../../data/deploy/jar-uploads';
import { DEPLOYMENT_TABLE } from '../../data/deploy/registry';
import { DeployDeps } from './deps';

/** The deploy reached RUNNING: record it, and drop the uploaded JAR (its image holds it now). */
export function finishDeployment({ db, config }: DeployDeps) {
  return async (input: { deploymentId: string; at: string }): Promise<void> => {
    const event = { at: input.at, stage: 'RUNNING', message: 'The new instances serve all requests.' };
    await db(DEPLOYMENT_TABLE)
      .where({ id: input.deploymentId, status: 'DEPLOYING' })
      .update({ status: 'RUNNING', stage: 'RUNNING', finished_at: db.fn.now(), events: db.raw('events || ?::jsonb', [JSON.stringify([event])]) });
    await discardUploadedJar({ dataDir: config.dataDir, deploymentId: input.deploymentId });
  };
}
