import { WorkflowUpdateStage } from '@temporalio/client';
import { AppDeps } from '../../deps';
import { Proposed } from '../../../data/approvals/approvals';
import { StartedWorkflow, workflowUiUrl } from '../../../temporal-config/client';
import { decideUpdate } from '../../../workflows/approvals/definitions';
import { answerWithin, temporalCallError } from '../../../temporal-config/temporal-errors';

/** How long the decide answer waits for the publish run to confirm the decision. */
const ANSWER_WITHIN_MS = 30000;

/**
 * Rings the publish run's `decide` Update for a decision the endpoint recorded as proposed, and waits
 * until the run has confirmed it in the database. A refusal keeps its code (409 ALREADY_DECIDED when the
 * stage was decided meanwhile, 403 for four eyes); when Temporal does not answer in time it is 503 and
 * the proposal counts for nothing, so deciding again is safe.
 */
export async function deliverDecision(temporal: AppDeps['temporal'], proposed: Proposed): Promise<StartedWorkflow> {
  try {
    const confirmed = async () => {
      const update = await temporal.client.workflow.getHandle(proposed.workflowId).startUpdate(decideUpdate, {
        args: [{ stage: proposed.stage, proposalId: proposed.proposalId }],
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      });
      await update.result();
      return update;
    };
    const update = await answerWithin(ANSWER_WITHIN_MS, confirmed());
    const runId = update.workflowRunId ?? '';
    return { workflowId: proposed.workflowId, runId, uiUrl: workflowUiUrl(temporal, proposed.workflowId, runId) };
  } catch (error) {
    throw temporalCallError(error, {
      notFound: ['ALREADY_DECIDED', 'The publish run of this approval has ended.'],
      late: 'The publish run has not confirmed the decision yet: it counts only once confirmed, and deciding again is safe.',
    });
  }
}
