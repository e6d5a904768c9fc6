import * as wf from '@temporalio/workflow';
import type { ApprovalsActivities } from '../../activities/approvals';
import { Decision, PublishInput } from '../../domain/approvals';
import { ConfirmedDecision, DecideRequest, decideUpdate, decisionSignal, PublishProgress, publishProgressQuery, submittedUpdate } from './definitions';

// Submitting, confirming a decision and publishing are short writes to the platform's database: local
// activities, recorded in the history like any other, without a round trip through the server's task queue.
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
 * Runs started before this marker took their decisions from the `decision` signal, which anyone with
 * access to Temporal could send. Their recorded signals replay as they were; every signal that arrives
 * now is refused.
 */
export const RAW_DECISION_SIGNALS_REFUSED = 'raw-decision-signals-refused';

/**
 * Publishes one revision of a component, through approval when its policy asks for one: submit; with no
 * approval required, publish now; otherwise wait for every stage's decision, in order, then call the
 * component back with the outcome (retried until it takes it). A rejection at any stage ends the request.
 *
 * A decision arrives only as the `decide` Update sent by the decide endpoint, and counts only once the run
 * has confirmed it in the platform's database, where the endpoint recorded who decided and the four-eyes
 * rules are checked again. A request naming no recorded decision fails, visibly, in the history.
 */
export async function publishComponent(input: PublishInput): Promise<PublishProgress> {
  const progress: PublishProgress = { stage: 'SUBMITTING', revision: input.revision, correlationId: input.correlationId, approvalStage: 0, approvalStages: [] };
  const decisions: ConfirmedDecision[] = [];
  let submitFailure: unknown;

  wf.setHandler(publishProgressQuery, () => progress);
  wf.setHandler(submittedUpdate, async () => {
    await wf.condition(() => progress.stage !== 'SUBMITTING' || submitFailure !== undefined);
    if (submitFailure !== undefined) throw submitFailure;
    return progress;
  });
  wf.setHandler(
    decideUpdate,
    async (request) => {
      const confirmed = await db.confirmDecision({ correlationId: progress.correlationId!, stage: request.stage, proposalId: request.proposalId });
      decisions.push(confirmed);
      return confirmed;
    },
    {
      // Rejected before anything is written to the history: a request for a stage the run is not waiting for.
      // `unknown`: a raw Update from outside the API may carry anything.
      validator: (raw: unknown) => {
        const request = raw as Partial<DecideRequest> | null;
        if (typeof request?.proposalId !== 'string' || !Number.isInteger(request.stage)) {
          throw wf.ApplicationFailure.nonRetryable('A decide request names a stage and a recorded decision.', 'VALIDATION_FAILED');
        }
        if (progress.stage !== 'PENDING_APPROVAL' || request.stage !== progress.approvalStage || decisions.some((d) => d.stage === request.stage)) {
          throw wf.ApplicationFailure.nonRetryable(`This run is not waiting for a decision on stage ${request.stage}.`, 'ALREADY_DECIDED');
        }
      },
    },
  );
  wf.setHandler(decisionSignal, async (signal) => {
    if (!wf.patched(RAW_DECISION_SIGNALS_REFUSED)) {
      decisions.push(signal);
      return;
    }
    await db.refuseRawDecision({ workflowId: wf.workflowInfo().workflowId, message: 'decision' });
  });

  let submitted;
  try {
    submitted = await db.submitForApproval({ ...input, correlationId: input.correlationId ?? wf.uuid4(), workflowId: wf.workflowInfo().workflowId });
  } catch (error) {
    submitFailure = error;
    await wf.condition(wf.allHandlersFinished);
    throw error;
  }
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
    await wf.condition(() => decisions.some((decision) => decision.stage === stage));
    outcome = decisions.find((decision) => decision.stage === stage)!.decision;
  }

  progress.stage = 'CALLING_BACK';
  await callback.deliverCallback({ callbackPath: input.callbackPath, decision: outcome, revision: input.revision, correlationId: submitted.correlationId! });
  await db.closeApproval({ correlationId: submitted.correlationId!, outcome });
  progress.stage = outcome === 'APPROVED' ? 'PUBLISHED' : 'REJECTED';
  return progress;
}
