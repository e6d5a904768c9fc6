import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

/** The approvals domain's contract between the API, the workers and the Web UI. No I/O here. */

export const COMPONENT_TYPE_NAMES = [
  'PAGE', 'PAGE_LAYOUT', 'PORTLET', 'WEB_CONTENT', 'NAVIGATION', 'DYNAMIC_FORM',
  'ASSET', 'EMAIL_TEMPLATE', 'SOAP_COMPONENT', 'WORKFLOW_DEFINITION',
] as const;
export type ComponentTypeName = (typeof COMPONENT_TYPE_NAMES)[number];

export type ComponentStatus = 'DRAFT' | 'PENDING_APPROVAL' | 'PUBLISHED' | 'REJECTED' | 'ARCHIVED';
export type Decision = 'APPROVED' | 'REJECTED';

export interface ApprovalStage {
  name: string;
  role: string;
}

/** A workflow definition without stages of its own, or no definition bound to a policy: one manager. */
export const DEFAULT_STAGES: ApprovalStage[] = [{ name: 'Approval', role: 'MANAGER' }];

/** One publish of a component at a time: a second one while this runs is 409 APPROVAL_PENDING. */
export const publishWorkflowId = (componentType: string, resourceId: string) => `publish:${componentType}:${resourceId}`;

export interface PublishInput {
  componentType: string;
  siteId: string;
  resourceId: string;
  /** The revision submitted: what gets published, whatever the draft becomes meanwhile. */
  revision: number;
  /** Where the outcome is POSTed (internal token), relative to the API. */
  callbackPath: string;
  requestedBy: string;
  title: string | null;
  comment: string | null;
  /** Set when the approval was already submitted (the internal submit endpoint started this run). */
  correlationId: string | null;
}

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

/**
 * The decide endpoint's doorbell. It carries no decision: only the id of the one the endpoint recorded
 * in the platform's database, which the run confirms there before it acts. A forged request names no
 * recorded decision and changes nothing.
 */
export interface DecideRequest {
  /** The stage the run must be waiting for. */
  stage: number;
  /** The decision the endpoint recorded as proposed (`workflow.approval_proposal`). */
  proposalId: string;
}

/** A decision as confirmed in the database: the approval's record of who decided. */
export interface ConfirmedDecision {
  stage: number;
  decision: Decision;
  decidedBy: string;
}

export type PublishStage = 'SUBMITTING' | 'PENDING_APPROVAL' | 'CALLING_BACK' | 'PUBLISHED' | 'REJECTED';

export interface PublishProgress {
  stage: PublishStage;
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
export const publishProgressQuery = defineQuery<PublishProgress>('progress');
