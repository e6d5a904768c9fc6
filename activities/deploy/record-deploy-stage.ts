import { recordDeployStage as recordStage } from '../../data/deploy/registry';
import { DeployStage } from '../../domain/deploy';
import { DeployDeps } from './deps';

export interface RecordDeployStageInput {
  deploymentId: string;
  stage: DeployStage;
  message: string;
  at: string;
}

/** Moves a deploy to its next stage and appends the event; a retry finds the event there and adds nothing. */
export function recordDeployStage({ db }: DeployDeps) {
  return async (input: RecordDeployStageInput): Promise<void> => {
    await recordStage(db, input);
  };
}
