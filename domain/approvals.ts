/** The approvals vocabulary every layer shares: component types, statuses, decisions, stages. Imports only its own layer. */
import { check, firstProblem, Problem } from './workflow-input';
import { Refusal } from './refusal';

export const COMPONENT_TYPE_NAMES = [
  'PAGE',
  'PAGE_LAYOUT',
  'PORTLET',
  'WEB_CONTENT',
  'NAVIGATION',
  'DYNAMIC_FORM',
  'ASSET',
  'EMAIL_TEMPLATE',
  'SOAP_COMPONENT',
  'WORKFLOW_DEFINITION',
] as const;
export type ComponentTypeName = (typeof COMPONENT_TYPE_NAMES)[number];

/**
 * A release: a named set of items, each at a chosen revision, published together or not at all. It goes
 * through the same publish run and approval as one item; its "revision" is the release's version, which
 * every change to its items moves on.
 */
export const RELEASE = 'RELEASE';
export const RELEASE_COLLECTION = '/api/content/releases';
/** What a publish run may name: one component, or a release of several. */
export const PUBLISHABLE_NAMES = [...COMPONENT_TYPE_NAMES, RELEASE] as const;

export type ComponentStatus = 'DRAFT' | 'PENDING_APPROVAL' | 'PUBLISHED' | 'REJECTED' | 'ARCHIVED';
export type Decision = 'APPROVED' | 'REJECTED';

export interface ApprovalStage {
  name: string;
  role: string;
  /** The users (directory ids, as their tokens name them) who decide this stage; named, they alone do, and the role does not. */
  assignees?: string[];
  /** An ISO 8601 duration: without a decision by then, the stage's role holders are reminded. */
  remindAfter?: string;
  /** An ISO 8601 duration: without a decision by then, the site's ADMINs are told. */
  escalateAfter?: string;
}

/** ISO 8601 durations in weeks, days, hours, minutes and seconds: `P2D`, `PT4H`, `P1DT12H`, `PT3S`. */
export const ISO_DURATION = '^P(?!$)(\\d+W)?(\\d+D)?(T(?=\\d)(\\d+H)?(\\d+M)?(\\d+(\\.\\d+)?S)?)?$';

/** The length of an ISO 8601 duration (as ISO_DURATION admits) in milliseconds; null when it is not one. */
export function durationMs(duration: string): number | null {
  const match = new RegExp(ISO_DURATION).exec(duration);
  if (!match) return null;
  const [, weeks, days, , hours, minutes, seconds] = match;
  const number = (part: string | undefined) => (part ? parseFloat(part) : 0);
  return Math.round(((((number(weeks) * 7 + number(days)) * 24 + number(hours)) * 60 + number(minutes)) * 60 + number(seconds)) * 1000);
}

/** A workflow definition without stages of its own, or no definition bound to a policy: one manager. */
export const DEFAULT_STAGES: ApprovalStage[] = [{ name: 'Approval', role: 'MANAGER' }];

/** What an approval callback path looks like: a path of the API itself, nothing else. */
export const CALLBACK_PATH_PATTERN = '^/api/[A-Za-z0-9/_.~-]+$';

/**
 * Why a callback path is refused, or null. Checked at the route and again where the callback is sent: a
 * run started on Temporal directly never went through the route. No empty or dot segment: `//host` and
 * `/../` would leave the API's own paths.
 */
export function callbackPathProblem(callbackPath: unknown): string | null {
  if (typeof callbackPath !== 'string' || callbackPath.length > 1000 || !new RegExp(CALLBACK_PATH_PATTERN).test(callbackPath))
    return 'the callback path is not a path of the API';
  if (
    callbackPath
      .split('/')
      .slice(1)
      .some((segment) => segment === '' || segment === '.' || segment === '..')
  )
    return 'the callback path has an empty or dot segment';
  return null;
}

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

/** The moments an approval emails people: a stage reached, its reminder, its escalation, and the outcome. */
/** HELD: a scheduled publish that needed no approval when it was scheduled needs one at its time; its requester is told. */
export type NoticeKind = 'REQUESTED' | 'REMINDER' | 'ESCALATED' | 'OUTCOME' | 'HELD';

/**
 * Why an approval callback does not match what its approval decided, or null. The callback publishes (or
 * rejects) exactly the item and revision the approval was about, and only once the approval has that outcome.
 */
export function callbackMismatch(
  approval: { component_type: string; resource_id: string; revision: number; status: string } | undefined,
  claim: { componentType: string; resourceId: string; revision: number; decision: Decision },
): string | null {
  if (!approval) return 'does not exist';
  if (approval.component_type !== claim.componentType || approval.resource_id !== claim.resourceId)
    return `is not about ${claim.componentType} ${claim.resourceId}`;
  if (approval.revision !== claim.revision) return `approved revision ${approval.revision}, not ${claim.revision}`;
  if (approval.status !== claim.decision) return `is ${approval.status}, not ${claim.decision}`;
  return null;
}

/** Why a publish run's input is refused (the workflow checks it before anything else), or null. */
export function publishInputProblem(input: unknown): Problem {
  return firstProblem(input, (given) => [
    check.oneOf('componentType', given.componentType, PUBLISHABLE_NAMES),
    check.siteId('siteId', given.siteId),
    check.uuid('resourceId', given.resourceId),
    check.integer('revision', given.revision, 1, 2147483647),
    callbackPathProblem(given.callbackPath),
    check.text('requestedBy', given.requestedBy, 256),
    check.optional(given.title, () => (typeof given.title === 'string' && given.title.length <= 1000 ? null : 'title is too long'), true),
    check.optional(given.comment, () => (typeof given.comment === 'string' && given.comment.length <= 2000 ? null : 'comment is too long'), true),
    check.optional(given.correlationId, () => check.uuid('correlationId', given.correlationId), true),
    check.optional(given.action, () => check.oneOf('action', given.action, given.componentType === RELEASE ? ['PUBLISH'] : ['PUBLISH', 'ARCHIVE'])),
    check.optional(given.dueAt, () => check.instant('dueAt', given.dueAt)),
    // An archive happens only at a due time. Without one, the run recorded a due time of 1970 and then
    // waited for ever on a time that is not a number, holding the item's publish id.
    given.action === 'ARCHIVE' && !given.dueAt ? 'an archive names its dueAt' : null,
  ]);
}

/**
 * Why an archive run's input is refused, or null: a publish run's input with action ARCHIVE, which
 * publishInputProblem already holds to a due time.
 */
export function archiveInputProblem(input: unknown): Problem {
  return publishInputProblem(input) ?? ((input as PublishInput).action === 'ARCHIVE' ? null : 'an archive run has action ARCHIVE');
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

/**
 * Who may decide a stage (besides four eyes, checked apart): its named users when it names any, ADMINs
 * included only when named; else the stage's role holders and any ADMIN. Named users need not hold the role.
 */
export function whoDecidesStage(stage: ApprovalStage, decider: { id: string; roles: readonly string[] }): { allowed: true } | { allowed: false; why: string } {
  if (stage.assignees && stage.assignees.length > 0) {
    return stage.assignees.includes(decider.id) ? { allowed: true } : { allowed: false, why: `Stage "${stage.name}" is decided by the users it names.` };
  }
  if (decider.roles.includes('ADMIN') || decider.roles.includes(stage.role)) return { allowed: true };
  return { allowed: false, why: `Stage "${stage.name}" is decided by the role ${stage.role}.` };
}

/** Why four eyes refuses a decider, with the code the answer carries; null when they may decide. */
export type FourEyesRefusal = (Refusal & { code: 'SELF_APPROVAL_FORBIDDEN' | 'APPROVER_ALREADY_DECIDED' }) | null;

/**
 * Four eyes: nobody decides a request they made, nor one that would publish a revision they wrote (the
 * item's, or any item's of a release), and each stage of one request is decided by another person.
 */
export function fourEyesRefusal(args: {
  deciderId: string;
  requestedBy: string;
  revisionAuthors: readonly string[];
  decisions: ReadonlyArray<{ decidedBy: string; stageName: string }>;
}): FourEyesRefusal {
  if (args.requestedBy === args.deciderId) return { code: 'SELF_APPROVAL_FORBIDDEN', why: 'Nobody decides their own request.' };
  if (args.revisionAuthors.includes(args.deciderId)) {
    return { code: 'SELF_APPROVAL_FORBIDDEN', why: 'Nobody decides a request that would publish a revision they wrote.' };
  }
  const earlier = args.decisions.find((decision) => decision.decidedBy === args.deciderId);
  if (earlier) return { code: 'APPROVER_ALREADY_DECIDED', why: `You decided stage "${earlier.stageName}" of this request; another person decides the next.` };
  return null;
}

/** An approval as a decider meets it: who asked, where it stands, and the stage now open. */
export interface ApprovalFacts {
  siteId: string;
  requestedBy: string;
  status: string;
  stage: ApprovalStage;
  decisions: ReadonlyArray<{ decidedBy: string; stageName: string }>;
}

/**
 * Who may propose a decision of the open stage: a member of the approval's site (an ADMIN is a member of
 * every site), not the requester, while the approval is pending, who decides the stage. The checks run in
 * this order, so a caller meets the first that applies. Four eyes comes last, apart, because it needs the
 * revisions' authors, which are read only for a caller who passes these.
 */
export function proposalRefusal(approval: ApprovalFacts, decider: { id: string; roles: readonly string[]; sites: readonly string[] }): Refusal | null {
  if (!decider.roles.includes('ADMIN') && !decider.sites.includes(approval.siteId))
    return { code: 'FORBIDDEN', why: `You do not belong to site ${approval.siteId}.` };
  if (approval.requestedBy === decider.id) return { code: 'SELF_APPROVAL_FORBIDDEN', why: 'Nobody decides their own request.' };
  if (approval.status !== 'PENDING') return { code: 'ALREADY_DECIDED', why: `This approval is already ${approval.status}.` };
  const decides = whoDecidesStage(approval.stage, decider);
  if (!decides.allowed) return { code: 'FORBIDDEN', why: decides.why };
  return null;
}

/**
 * When the run confirms a proposed decision, four eyes is checked again, and so are a stage's named users:
 * the role was checked with the proposal, and names are all there is to check.
 */
export function confirmationRefusal(approval: ApprovalFacts, deciderId: string, revisionAuthors: readonly string[]): Refusal | null {
  const fourEyes = fourEyesRefusal({ deciderId, revisionAuthors, ...approval });
  if (fourEyes) return fourEyes;
  const named = approval.stage.assignees;
  if (named && named.length > 0 && !named.includes(deciderId))
    return { code: 'FORBIDDEN', why: `Stage "${approval.stage.name}" is decided by the users it names.` };
  return null;
}

const notOfRecord = (why: string): Refusal => ({ code: 'VALIDATION_FAILED', why });

/**
 * A publish run names a release as the database holds it: one of the run's site, at the version the run was
 * asked about (a release's "revision" is its version, so the run names the exact set of items).
 */
export function releaseOfRecordRefusal(
  input: Pick<PublishInput, 'siteId' | 'resourceId' | 'revision'>,
  release: { siteId: string; version: number } | undefined,
): Refusal | null {
  if (!release || release.siteId !== input.siteId) return notOfRecord(`Release ${input.resourceId} is not a release of site ${input.siteId}.`);
  if (release.version !== input.revision)
    return notOfRecord(`Release ${input.resourceId} is at version ${release.version}, not ${input.revision}: its items changed.`);
  return null;
}

/**
 * A publish run names an item of the site it names, at a revision the item has. A run started on Temporal
 * directly could otherwise name a site without a policy for an item of a site with one.
 */
export function itemOfRecordRefusal(
  input: Pick<PublishInput, 'componentType' | 'siteId' | 'resourceId' | 'revision'>,
  item: { inSite: boolean; hasRevision: boolean },
): Refusal | null {
  if (!item.inSite) return notOfRecord(`${input.componentType} ${input.resourceId} is not an item of site ${input.siteId}.`);
  if (!item.hasRevision) return notOfRecord(`${input.componentType} ${input.resourceId} has no revision ${input.revision}.`);
  return null;
}

/**
 * The policies a submission must pass: of the policies its item types resolve to, in type order, those
 * enabled, each chain once (`chain`: the bound workflow definition, null for the default). A release so
 * passes every chain one of its items would need alone.
 */
export function chainsToPass<P extends { enabled: boolean; chain: string | null }>(policies: ReadonlyArray<P | null>): P[] {
  const seen = new Set<string | null>();
  const kept: P[] = [];
  for (const policy of policies) {
    if (!policy || !policy.enabled || seen.has(policy.chain)) continue;
    seen.add(policy.chain);
    kept.push(policy);
  }
  return kept;
}
