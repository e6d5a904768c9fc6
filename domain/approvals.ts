/** The approvals vocabulary every layer shares: component types, statuses, decisions, stages. Imports nothing. */

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

/** A revision submitted for publishing, with what its approval needs; the publish workflow's input. */
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
  /** What the run does: publish the revision (the default), or archive the component. */
  action?: ScheduledAction;
  /** When the publish or archive happens (ISO); now when absent. An approval is still needed first. */
  dueAt?: string | null;
}

export type ScheduledAction = 'PUBLISH' | 'ARCHIVE';
