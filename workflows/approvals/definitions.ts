import { defineQuery, defineSignal } from '@temporalio/workflow';

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

export interface DecisionSignal {
  /** The stage this decision is for; a signal for another stage is ignored. */
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

export const decisionSignal = defineSignal<[DecisionSignal]>('decision');
export const publishProgressQuery = defineQuery<PublishProgress>('progress');
