import { writeDeployNotice } from '../../data/deploy/notices';
import { DeployDeps } from './deps';

/** Writes the notice of a deploy that failed, reverted or was rolled back (sent by the messaging worker); answers how many recipients it has. */
export function notifyDeployOwners({ db, config }: DeployDeps) {
  return async (input: { batchId: string; deploymentId: string }): Promise<number> => writeDeployNotice(db, { ...input, publicUrl: config.api.publicUrl });
}
