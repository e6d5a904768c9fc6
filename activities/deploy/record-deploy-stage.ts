import { DEPLOYMENT_TABLE } from '../../data/deploy/registry';
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
    const event = { at: input.at, stage: input.stage, message: input.message };
    await db(DEPLOYMENT_TABLE)
      .where({ id: input.deploymentId })
      .whereRaw('not (events @> ?::jsonb)', [JSON.stringify([{ stage: input.stage }])])
      .update({ stage: input.stage, events: db.raw('events || ?::jsonb', [JSON.stringify([event])]) });
  };
}
