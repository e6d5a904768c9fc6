import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { ApprovalStage, ConfirmedDecision, Decision, DecideRequest, PublishInput, ScheduledAction } from '../../domain/approvals';

export type { ConfirmedDecision, DecideRequest };

/** The publish workflow's contract between the API, the workers and the Web UI: its id, messages and answers. */

/** One publish of a component at a time: a second one while this runs is 409 APPROVAL_PENDING. */
export const publishWorkflowId = (componentType: string, resourceId: string) => `publish:${componentType}:${resourceId}`;

/**
 * What runs started before decisions became an Update received as the `decision` signal. Kept so their
 * histories replay; a run refuses every `decision` signal that reaches it now (see the workflow).
 */
export interface DecisionSignal {
  /** The stage this decision is for; a signal for another stage is ignored. */
  stage: number;
  decision: Decision;
  decidedBy: string;
}

export type PublishStage =
  'SUBMITTING' | 'PENDING_APPROVAL' | 'SCHEDULED' | 'PUBLISHING' | 'ARCHIVING' | 'CALLING_BACK' | 'PUBLISHED' | 'REJECTED' | 'ARCHIVED' | 'CANCELLED';

export interface PublishProgress {
  stage: PublishStage;
  /** What the run does at its time (absent in runs from before scheduling: PUBLISH). */
  action?: ScheduledAction;
  /** When it does it; null: as soon as it may. */
  dueAt?: string | null;
  revision: number;
  correlationId: string | null;
  /** The approval stage waited for (0-based), while PENDING_APPROVAL. */
  approvalStage: number;
  approvalStages: ApprovalStage[];
}

/** Answers once the run has published the revision or put it in the approval queue (Update-with-Start). */
export const submittedUpdate = defineUpdate<PublishProgress>('submitted');
export const decideUpdate = defineUpdate<ConfirmedDecision, [DecideRequest]>('decide');
export const decisionSignal = defineSignal<[DecisionSignal]>('decision');

/**
 * The cancel endpoint's notice to the run. Like `decide`, it names no one: the run acts only on a cancel the
 * endpoint recorded on the scheduled change, and only while it waits for its time.
 */
export const cancelScheduleUpdate = defineUpdate<PublishProgress>('cancel-schedule');
export const publishProgressQuery = defineQuery<PublishProgress>('progress');

/** The publish workflow's type, as the API starts it: by name, without loading workflow code. */
export const PUBLISH_WORKFLOW = 'publishComponent';
export type PublishWorkflow = (input: PublishInput) => Promise<PublishProgress>;

/** The scheduled archive of a component, started under the item's publish id with the same input and answers. */
export const ARCHIVE_COMPONENT_WORKFLOW = 'archiveComponent';
export type ArchiveComponentWorkflow = PublishWorkflow;

/** The daily revision retention job: its schedule, and the workflow the schedule starts. */
export const REVISION_RETENTION_SCHEDULE_ID = 'revision-retention';
export const REVISION_RETENTION_WORKFLOW = 'pruneRevisionsDaily';
