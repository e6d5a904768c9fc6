import * as wf from '@temporalio/workflow';
import type { ApprovalsActivities } from '../../activities/approvals';
import { Decision, decisionSignal, DecisionSignal, PublishInput, PublishProgress, publishProgressQuery } from './definitions';

// Submitting and publishing are short writes to the platform's database: local activities, recorded in
// the history like any other, without a round trip through the server's task queue for each.
const db = wf.proxyLocalActivities<ApprovalsActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 },
});
// The callback is retried until the component takes it, however long that is.
const callback = wf.proxyActivities<ApprovalsActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
});

/**
 * Publishes one revision of a component, through approval when its policy asks for one: submit; with no
 * approval required, publish now; otherwise wait for every stage's decision, in order, then call the
 * component back with the outcome (retried until it takes it). A rejection at any stage ends the request.
 */
export async function publishComponent(input: PublishInput): Promise<PublishProgress> {
  const progress: PublishProgress = { stage: 'SUBMITTING', revision: input.revision, correlationId: input.correlationId, approvalStage: 0, approvalStages: [] };
  const decisions: DecisionSignal[] = [];
  wf.setHandler(publishProgressQuery, () => progress);
  wf.setHandler(decisionSignal, (signal) => void decisions.push(signal));

  const submitted = await db.submitForApproval({ ...input, correlationId: input.correlationId ?? wf.uuid4(), workflowId: wf.workflowInfo().workflowId });
  if (!submitted.required) {
    await db.publishNow(input);
    progress.stage = 'PUBLISHED';
    return progress;
  }

  progress.stage = 'PENDING_APPROVAL';
  progress.correlationId = submitted.correlationId;
  progress.approvalStages = submitted.stages;
  let outcome: Decision = 'APPROVED';
  for (let stage = 0; stage < submitted.stages.length && outcome === 'APPROVED'; stage++) {
    progress.approvalStage = stage;
    await wf.condition(() => decisions.some((signal) => signal.stage === stage));
    outcome = decisions.find((signal) => signal.stage === stage)!.decision;
  }

  progress.stage = 'CALLING_BACK';
  await callback.deliverCallback({ callbackPath: input.callbackPath, decision: outcome, revision: input.revision, correlationId: submitted.correlationId! });
  await db.closeApproval({ correlationId: submitted.correlationId!, outcome });
  progress.stage = outcome === 'APPROVED' ? 'PUBLISHED' : 'REJECTED';
  return progress;
}
