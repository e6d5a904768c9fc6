import { log } from '@temporalio/activity';

/**
 * Leaves the refusal of a `decision` signal sent straight to Temporal in the run's history (as this local
 * activity's marker) and in the worker's log. The signal changed nothing: decisions reach a publish run
 * only through the decide endpoint.
 */
export function refuseRawDecision() {
  return async (input: { workflowId: string; message: string }): Promise<{ refused: true; reason: string }> => {
    const reason = 'decisions reach a publish run only through POST /api/workflow/approvals/{correlationId}/decide';
    log.warn(`refused a raw '${input.message}' signal sent to ${input.workflowId}: ${reason}`);
    return { refused: true, reason };
  };
}
