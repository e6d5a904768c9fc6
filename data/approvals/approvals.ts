import { Knex } from 'knex';
import { rawRows } from '../db';
import { Page, PageRequest, paginate } from '../paging';
import { conflict, notFound, refusedWith } from '../../lib/errors';
import {
  ApprovalFacts,
  ApprovalStage,
  chainsToPass,
  confirmationRefusal,
  Decision,
  DEFAULT_STAGES,
  fourEyesRefusal,
  itemOfRecordRefusal,
  proposalRefusal,
  PublishInput,
  RELEASE,
  releaseOfRecordRefusal,
} from '../../domain/approvals';
import { Refusal } from '../../domain/refusal';
import { componentType } from '../content/component-types';
import { findComponent, setComponentStatus } from '../content/components';
import { rowAtRevision } from '../content/revisions';
import { PolicyRow, resolvePolicy } from './policies';
import { revisionAuthorsOf } from './revision-authors';
import { findRelease, itemTypesOfRelease, markReleasePending } from '../content/releases';
import { releaseSubmittable } from '../../domain/releases';

export const APPROVAL_TABLE = 'workflow.approval';

export interface DecisionRecord {
  stage: number;
  stageName: string;
  decision: Decision;
  decidedBy: string;
  decidedByName: string | null;
  comment: string | null;
  at: string;
  /** The proposal the publish run confirmed (absent on decisions taken before proposals existed). */
  proposalId?: string;
}

export interface ApprovalRow {
  correlation_id: string;
  component_type: string;
  site_id: string;
  resource_id: string;
  revision: number;
  callback_path: string;
  requested_by: string;
  title: string | null;
  comment: string | null;
  status: 'PENDING' | 'APPROVED' | 'REJECTED';
  stages: ApprovalStage[];
  current_stage: number;
  decisions: DecisionRecord[];
  workflow_id: string;
  created_at: Date;
  decided_at: Date | null;
}

/** The stages of the bound workflow definition's published revision; one MANAGER stage without one. */
async function stagesOf(db: Knex, policy: PolicyRow): Promise<ApprovalStage[]> {
  if (!policy.workflow_definition_id) return DEFAULT_STAGES;
  const definitions = componentType('WORKFLOW_DEFINITION')!;
  const definition = (await db(definitions.table).where({ id: policy.workflow_definition_id }).first('published_rev')) as
    { published_rev: number | null } | undefined;
  const published = definition?.published_rev ? await rowAtRevision(db, definitions, policy.workflow_definition_id, definition.published_rev) : undefined;
  if (!published) {
    throw conflict(
      'WORKFLOW_DEFINITION_NOT_PUBLISHED',
      `The workflow definition ${policy.workflow_definition_id} bound to this policy has no published revision.`,
    );
  }
  return published.stages as ApprovalStage[];
}

export interface Submitted {
  required: boolean;
  correlationId: string | null;
  stages: ApprovalStage[];
}

/**
 * The stages a submission must pass, or null when it needs no approval: those of each chain its items' types
 * resolve to in the site (`chainsToPass`). A release passes them as one request.
 */
async function stagesRequired(db: Knex, input: Pick<PublishInput, 'componentType' | 'siteId' | 'resourceId'>): Promise<ApprovalStage[] | null> {
  const typeNames = input.componentType === RELEASE ? await itemTypesOfRelease(db, input.resourceId) : [input.componentType];
  const resolved: Array<(PolicyRow & { chain: string | null }) | null> = [];
  for (const typeName of typeNames) {
    const policy = await resolvePolicy(db, typeName, input.siteId);
    resolved.push(policy && { ...policy, chain: policy.workflow_definition_id });
  }
  const chains = chainsToPass(resolved);
  if (chains.length === 0) return null;
  const stages: ApprovalStage[] = [];
  for (const policy of chains) stages.push(...(await stagesOf(db, policy)));
  return stages;
}

/**
 * Submits a revision for approval: when the resolved policy requires one, records the approval (the
 * manager's task) and marks a registered component PENDING_APPROVAL. Safe to repeat with the same
 * correlation id; another open approval of the resource is 409 APPROVAL_PENDING.
 */
export async function submitApproval(db: Knex, input: PublishInput & { correlationId: string; workflowId: string }): Promise<Submitted> {
  await assertSubmissionOfRecord(db, input);
  if (input.componentType === RELEASE) await assertReleaseSubmittable(db, input);
  const required = await stagesRequired(db, input);
  if (!required) return { required: false, correlationId: null, stages: [] };
  const earlier = (await db(APPROVAL_TABLE).where({ correlation_id: input.correlationId }).first()) as ApprovalRow | undefined;
  if (!earlier) {
    const stages = required;
    const row = {
      correlation_id: input.correlationId,
      component_type: input.componentType,
      site_id: input.siteId,
      resource_id: input.resourceId,
      revision: input.revision,
      callback_path: input.callbackPath,
      requested_by: input.requestedBy,
      title: input.title,
      comment: input.comment,
      status: 'PENDING',
      stages: JSON.stringify(stages),
      workflow_id: input.workflowId,
    };
    // The partial unique index keeps one open approval per resource.
    const insert = db(APPROVAL_TABLE).insert(row).toSQL();
    const inserted = await rawRows<{ correlation_id: string }>(
      db,
      `${insert.sql} on conflict (component_type, resource_id) where status = 'PENDING' do nothing returning correlation_id`,
      insert.bindings,
    );
    if (inserted.length === 0) throw conflict('APPROVAL_PENDING', `An approval of ${input.componentType} ${input.resourceId} is already open.`);
  }
  const approval = (await db(APPROVAL_TABLE).where({ correlation_id: input.correlationId }).first()) as ApprovalRow;
  const type = componentType(input.componentType);
  if (type && approval.status === 'PENDING') {
    await setComponentStatus(db, { type, id: input.resourceId, status: 'PENDING_APPROVAL', actor: { id: input.requestedBy, name: null } });
  }
  if (input.componentType === RELEASE && approval.status === 'PENDING') {
    const marked = await markReleasePending(db, { id: input.resourceId, version: input.revision, correlationId: approval.correlation_id });
    if (!marked) {
      // Not a release that can be submitted (published, or waiting on another approval): the request is withdrawn.
      await db(APPROVAL_TABLE).where({ correlation_id: approval.correlation_id, status: 'PENDING' }).delete();
      throw conflict('RELEASE_LOCKED', `Release ${input.resourceId} cannot be submitted: it is published, or waits on another approval.`);
    }
  }
  return { required: true, correlationId: approval.correlation_id, stages: approval.stages };
}

/**
 * A release is submitted only from OPEN, FAILED or REJECTED (or again, by a retried activity, for the
 * approval it already waits on): a run started on Temporal directly cannot reopen a published release.
 */
async function assertReleaseSubmittable(db: Knex, input: { resourceId: string; correlationId: string }): Promise<void> {
  const release = await findRelease(db, input.resourceId);
  if (release && !releaseSubmittable({ status: release.status, pendingCorrelationId: release.pending_correlation_id }, input.correlationId))
    throw conflict('RELEASE_LOCKED', `Release ${input.resourceId} is ${release.status}: it cannot be submitted.`);
}

/** The item (or release) and revision a publish run names are what the database holds (domain/approvals). */
export async function assertSubmissionOfRecord(db: Knex, input: Pick<PublishInput, 'componentType' | 'siteId' | 'resourceId' | 'revision'>): Promise<void> {
  refuseIf(input.componentType === RELEASE ? releaseOfRecordRefusal(input, await releaseFacts(db, input.resourceId)) : await itemRefusal(db, input));
}

async function releaseFacts(db: Knex, id: string): Promise<{ siteId: string; version: number } | undefined> {
  const release = await findRelease(db, id);
  return release && { siteId: release.site_id, version: release.version };
}

async function itemRefusal(db: Knex, input: Pick<PublishInput, 'componentType' | 'siteId' | 'resourceId' | 'revision'>): Promise<Refusal | null> {
  const type = componentType(input.componentType);
  const row = type ? await findComponent(db, type, input.resourceId) : undefined;
  const inSite = Boolean(type && row && row.site_id === input.siteId);
  const hasRevision = inSite && Boolean(await rowAtRevision(db, type!, input.resourceId, input.revision));
  return itemOfRecordRefusal(input, { inSite, hasRevision });
}

function refuseIf(refusal: Refusal | null): void {
  if (refusal) throw refusedWith(refusal);
}

export async function findApproval(db: Knex, correlationId: string): Promise<ApprovalRow | undefined> {
  return db<ApprovalRow>(APPROVAL_TABLE).where({ correlation_id: correlationId }).first();
}

export async function openApprovalOf(db: Knex, componentTypeName: string, resourceId: string): Promise<ApprovalRow | undefined> {
  return db<ApprovalRow>(APPROVAL_TABLE).where({ component_type: componentTypeName, resource_id: resourceId, status: 'PENDING' }).first();
}

export interface Decider {
  id: string;
  name: string | null;
  roles: string[];
  sites: string[];
}

export const PROPOSAL_TABLE = 'workflow.approval_proposal';

interface ProposalRow {
  id: string;
  correlation_id: string;
  stage: number;
  decision: Decision;
  decided_by: string;
  decided_by_name: string | null;
  comment: string | null;
  confirmed_at: Date | null;
}

/** The approval as the rules of domain/approvals weigh it. */
const factsOf = (approval: ApprovalRow, stage: number): ApprovalFacts => ({
  siteId: approval.site_id,
  requestedBy: approval.requested_by,
  status: approval.status,
  stage: approval.stages[stage],
  decisions: approval.decisions,
});

/** Who wrote the revisions the approval would publish: the item's, or every item's of a release. */
const authorsOf = (db: Knex, approval: ApprovalRow) =>
  revisionAuthorsOf(db, { componentType: approval.component_type, resourceId: approval.resource_id, revision: approval.revision });

export interface Proposed {
  proposalId: string;
  stage: number;
  workflowId: string;
}

/**
 * The decide endpoint's half: checks, under the approval's row lock, that the caller may decide its
 * current stage (site, the stage's role or ADMIN, four eyes), and records the decision as proposed. It
 * counts only once the publish run has confirmed it (`confirmDecision`).
 */
export async function proposeDecision(
  db: Knex,
  args: { correlationId: string; decider: Decider; decision: Decision; comment: string | null },
): Promise<Proposed> {
  return db.transaction(async (trx) => {
    const approval = (await trx(APPROVAL_TABLE).where({ correlation_id: args.correlationId }).forUpdate().first()) as ApprovalRow | undefined;
    if (!approval) throw notFound(`No approval ${args.correlationId}.`);
    const facts = factsOf(approval, approval.current_stage);
    refuseIf(
      proposalRefusal(facts, args.decider) ?? fourEyesRefusal({ ...facts, deciderId: args.decider.id, revisionAuthors: await authorsOf(trx, approval) }),
    );
    const [proposal] = (await trx(PROPOSAL_TABLE)
      .insert({
        correlation_id: approval.correlation_id,
        stage: approval.current_stage,
        decision: args.decision,
        decided_by: args.decider.id,
        decided_by_name: args.decider.name,
        comment: args.comment,
      })
      .returning('id')) as Array<{ id: string }>;
    return { proposalId: proposal.id, stage: approval.current_stage, workflowId: approval.workflow_id };
  });
}

/**
 * The publish run's half, run when the `decide` Update reaches it: makes a proposed decision the
 * approval's decision for its stage, under the row lock, with the four-eyes rules checked again. A
 * proposal that does not exist, is for another stage, or comes after that stage was decided is refused
 * and changes nothing. Safe to repeat: the same proposal confirmed twice answers the same decision.
 */
export async function confirmDecision(db: Knex, args: { correlationId: string; stage: number; proposalId: string }): Promise<DecisionRecord> {
  return db.transaction(async (trx) => {
    const approval = (await trx(APPROVAL_TABLE).where({ correlation_id: args.correlationId }).forUpdate().first()) as ApprovalRow | undefined;
    const proposal = UUID.test(args.proposalId)
      ? ((await trx(PROPOSAL_TABLE).where({ id: args.proposalId, correlation_id: args.correlationId }).first()) as ProposalRow | undefined)
      : undefined;
    if (!approval || !proposal || proposal.stage !== args.stage) {
      throw conflict('DECISION_NOT_RECORDED', 'The decide endpoint recorded no such decision for this stage; decisions are taken only through it.');
    }
    const confirmed = approval.decisions.find((decision) => decision.stage === args.stage);
    if (confirmed) {
      if (confirmed.proposalId === proposal.id) return confirmed;
      throw conflict('ALREADY_DECIDED', `Stage ${args.stage} of this approval is decided already.`);
    }
    if (approval.status !== 'PENDING' || approval.current_stage !== args.stage)
      throw conflict('ALREADY_DECIDED', `This approval is already ${approval.status}.`);
    refuseIf(confirmationRefusal(factsOf(approval, args.stage), proposal.decided_by, await authorsOf(trx, approval)));

    const record: DecisionRecord = {
      stage: proposal.stage,
      stageName: approval.stages[proposal.stage].name,
      decision: proposal.decision,
      decidedBy: proposal.decided_by,
      decidedByName: proposal.decided_by_name,
      comment: proposal.comment,
      at: new Date().toISOString(),
      proposalId: proposal.id,
    };
    const finished = proposal.decision === 'REJECTED' || proposal.stage === approval.stages.length - 1;
    await trx(APPROVAL_TABLE)
      .where({ correlation_id: args.correlationId })
      .update({
        decisions: JSON.stringify([...approval.decisions, record]),
        current_stage: finished ? approval.current_stage : approval.current_stage + 1,
        status: finished ? proposal.decision : 'PENDING',
        decided_at: finished ? trx.fn.now() : null,
      });
    await trx(PROPOSAL_TABLE).where({ id: proposal.id }).update({ confirmed_at: trx.fn.now() });
    return record;
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Makes a still-PENDING approval agree with its run's outcome. */
export async function closeApproval(db: Knex, args: { correlationId: string; outcome: Decision }): Promise<void> {
  await db(APPROVAL_TABLE).where({ correlation_id: args.correlationId, status: 'PENDING' }).update({ status: args.outcome, decided_at: db.fn.now() });
}

/** An approval whose run could not be started: no run will decide it, so it must not block the resource. */
export async function dropApproval(db: Knex, correlationId: string): Promise<void> {
  await db(APPROVAL_TABLE).where({ correlation_id: correlationId }).delete();
}

/** The approval queue, newest first: every site's for an ADMIN, else the caller's sites'. */
export async function approvalQueue(
  db: Knex,
  args: { sites: string[] | 'ALL'; requestedBy?: string; status?: string; page: PageRequest },
): Promise<Page<ApprovalRow>> {
  const rows = db(APPROVAL_TABLE).select('*');
  if (args.sites !== 'ALL') rows.whereIn('site_id', args.sites);
  if (args.requestedBy !== undefined) rows.andWhere({ requested_by: args.requestedBy });
  if (args.status) rows.andWhere({ status: args.status });
  return paginate<ApprovalRow>({ query: rows, ...args.page, timeColumn: 'created_at', idColumn: 'correlation_id' });
}
