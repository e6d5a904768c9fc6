import { randomUUID } from 'node:crypto';
import { AppDeps } from '../../deps';
import { hasRole, requireSiteMember } from '../../http/identity';
import { Page, pageQueryFields, pageSchema, presentPage } from '../../http/pagination';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { resourceRoutes } from '../../http/resource-routes';
import { Type } from '@sinclair/typebox';
import { badRequest, notFound } from '../../../lib/errors';
import { ApprovalRow, approvalQueue, dropApproval, findApproval, proposeDecision, submitApproval } from '../../../data/approvals/approvals';
import { createPolicy, deletePolicy, findPolicy, listPolicies, PolicyRow, replacePolicy, resolvePolicy } from '../../../data/approvals/policies';
import { callbackPathProblem, PublishInput, RELEASE, RELEASE_COLLECTION } from '../../../domain/approvals';
import { releaseAuthorRole } from '../../../data/content/releases';
import { componentType } from '../../../data/content/component-types';
import { changesAgainstLiveOfMany } from '../../../data/content/components';
import { publishProgressQuery, publishWorkflowId } from '../../../workflows/approvals/definitions';
import { startPublishWorkflow, untilSubmitted } from '../content/start-publish';
import { listScheduledChanges } from '../../../data/approvals/scheduled-changes';
import { workflowUiUrl } from '../../../temporal-config/client';
import { SiteId } from '../../http/common-schemas';
import { deliverDecision } from './deliver-decision';
import {
  ApprovalWithProgressSchema,
  QueueItemSchema,
  CorrelationParams,
  DecideBody,
  DecidedSchema,
  PolicyBody,
  PolicyIdParams,
  PolicySchema,
  QueueQuery,
  ScheduledChangeSchema,
  SubmitBody,
  SubmittedSchema,
} from './schemas';

const iso = (value: Date | null) => (value === null ? null : new Date(value).toISOString());

function presentPolicy(row: PolicyRow) {
  return {
    id: row.id,
    componentType: row.component_type,
    siteId: row.site_id,
    workflowDefinitionId: row.workflow_definition_id,
    enabled: row.enabled,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export function presentApproval(row: ApprovalRow) {
  return {
    correlationId: row.correlation_id,
    componentType: row.component_type,
    siteId: row.site_id,
    resourceId: row.resource_id,
    revision: row.revision,
    callbackPath: row.callback_path,
    requestedBy: row.requested_by,
    title: row.title,
    comment: row.comment,
    status: row.status,
    stages: row.stages,
    currentStage: row.current_stage,
    decisions: row.decisions,
    workflowId: row.workflow_id,
    createdAt: iso(row.created_at),
    decidedAt: iso(row.decided_at),
  };
}

/** A page of approvals, each with its comparison against what is live: a few queries for the page, not a few per item. */
async function withComparisons(db: AppDeps['db'], page: Page<ApprovalRow>) {
  const compared = page.items.flatMap((approval, index) => {
    const type = componentType(approval.component_type);
    return type ? [{ index, type, id: approval.resource_id, rev: approval.revision }] : [];
  });
  const comparisons = await changesAgainstLiveOfMany(db, compared);
  const comparisonOf = new Map(compared.map((item, at) => [item.index, comparisons[at]]));
  return {
    items: page.items.map((approval, index) => ({ ...presentApproval(approval), comparison: comparisonOf.get(index) ?? null })),
    nextCursor: page.nextCursor,
  };
}

/** The approval policies: which component types need approval, in a site or globally. Only ADMIN manages them. */
function policyRoutes({ db }: AppDeps): AnyRoute[] {
  const ADMIN = access.roles('ADMIN');
  return resourceRoutes({
    path: '/api/workflow/approvals/policies',
    tag: 'workflow',
    noun: { one: 'policy', many: 'policies' },
    access: ADMIN,
    summaries: {
      list: 'Approval policies',
      create: 'Create an approval policy for a component type, in a site or globally (siteId null)',
      read: 'One approval policy',
      update: 'Replace an approval policy',
      remove: 'Delete an approval policy',
    },
    schemas: {
      listQuery: Type.Object({ ...pageQueryFields }),
      page: pageSchema(PolicySchema),
      item: PolicySchema,
      create: PolicyBody,
      update: PolicyBody,
      idParams: PolicyIdParams,
    },
    errors: { create: ['NOT_FOUND', 'APPROVAL_POLICY_EXISTS'], update: ['APPROVAL_POLICY_EXISTS'] },
    db,
    data: { list: listPolicies, create: createPolicy, read: findPolicy, update: replacePolicy, remove: deletePolicy },
    present: presentPolicy,
  });
}

/** The internal submit endpoint: opens an approval and starts the publish run that will carry it. */
function submitRoutes({ db, temporal }: AppDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/workflow/approvals/submit',
      tag: 'workflow',
      summary: 'Submit a revision for approval (internal): records the approval and starts its workflow when the policy requires one',
      access: access.internal,
      body: SubmitBody,
      responses: { 200: { description: 'whether the policy requires approval, and the approval opened', schema: SubmittedSchema } },
      errors: ['APPROVAL_PENDING', 'WORKFLOW_DEFINITION_NOT_PUBLISHED', 'TEMPORAL_UNAVAILABLE'],
      handler: async (ctx, { body }) => {
        // The same check as the run's own (domain/approvals.ts): the pattern alone lets `/api//x` or `..` through,
        // and a run that refused its input at its start would leave the approval open behind it.
        const pathProblem = callbackPathProblem(body.callbackPath);
        if (pathProblem)
          throw badRequest('VALIDATION_FAILED', `The request body is not valid: ${pathProblem}.`, [{ path: 'body.callbackPath', message: pathProblem }]);
        const policy = await resolvePolicy(db, body.componentType, body.siteId);
        if (!policy || !policy.enabled) {
          ctx.body = { required: false };
          return;
        }
        const input: PublishInput = { ...body, title: body.title ?? null, comment: null, correlationId: randomUUID() };
        const workflowId = publishWorkflowId(body.componentType, body.resourceId);
        const submitted = await submitApproval(db, { ...input, correlationId: input.correlationId!, workflowId });
        try {
          await startPublishWorkflow(temporal, input);
        } catch (error) {
          // No workflow will ever decide it: the approval must not block the resource.
          await dropApproval(db, input.correlationId!);
          throw error;
        }
        // The run owns the approval from here; the answer waits until it is ready for a decision.
        await untilSubmitted(temporal, workflowId);
        ctx.body = { required: submitted.required, correlationId: submitted.correlationId };
      },
    }),
  ];
}

/** The lists of approvals: the managers' queue, and the caller's own requests. */
function queueRoutes({ db }: AppDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/workflow/approvals',
      tag: 'workflow',
      summary: "The approval queue: approvals of the caller's sites, newest first",
      access: access.roles('MANAGER'),
      query: Type.Object({ ...pageQueryFields, ...QueueQuery.properties }),
      responses: { 200: { description: 'a page of approvals, each with what approving it would change', schema: pageSchema(QueueItemSchema) } },
      errors: [],
      handler: async (ctx, { query, identity }) => {
        const sites = identity.roles.includes('ADMIN') ? 'ALL' : identity.sites;
        ctx.body = await withComparisons(db, await approvalQueue(db, { sites, status: query.status, page: query }));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/workflow/approvals/mine',
      tag: 'workflow',
      summary: "The caller's own requests in the sites they belong to now, newest first, each with what approving it would change",
      access: access.user,
      query: Type.Object({ ...pageQueryFields, ...QueueQuery.properties }),
      responses: { 200: { description: 'a page of approvals the caller asked for', schema: pageSchema(QueueItemSchema) } },
      errors: [],
      handler: async (ctx, { query, identity }) => {
        // Only in the sites the caller belongs to now: a request left behind in a site they have left is not
        // theirs to read any more, nor its diff (#58).
        const sites = identity.roles.includes('ADMIN') ? 'ALL' : identity.sites;
        ctx.body = await withComparisons(db, await approvalQueue(db, { sites, requestedBy: identity.id, status: query.status, page: query }));
      },
    }),
  ];
}

/** The scheduled publishes and archives still to come, and who may cancel each. */
function scheduledRoutes({ db, temporal }: AppDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/workflow/scheduled',
      tag: 'workflow',
      summary: 'Scheduled publishes and archives still to come, soonest first: of one site, or of every site of the caller; of one item with `id`',
      access: access.user,
      query: Type.Object({
        ...pageQueryFields,
        siteId: Type.Optional(SiteId),
        id: Type.Optional(Type.String({ format: 'uuid', description: "one item's changes only" })),
      }),
      responses: { 200: { description: 'a page of scheduled changes', schema: pageSchema(ScheduledChangeSchema) } },
      errors: [],
      handler: async (ctx, { query, identity }) => {
        if (query.siteId) requireSiteMember(identity, query.siteId);
        const sites = query.siteId ? [query.siteId] : identity.roles.includes('ADMIN') ? 'ALL' : identity.sites;
        const page = await listScheduledChanges(db, { sites, resourceId: query.id, page: query });
        // Who may cancel: the type's author role; a release's, ADMIN once it holds an ADMIN-only type.
        const releaseRoles = new Map(
          await Promise.all(
            page.items
              .filter((change) => change.component_type === RELEASE)
              .map(async (change) => [change.resource_id, await releaseAuthorRole(db, change.resource_id)] as const),
          ),
        );
        ctx.body = presentPage(page, (change) => ({
          componentType: change.component_type,
          collection: change.component_type === RELEASE ? RELEASE_COLLECTION : (componentType(change.component_type)?.collection ?? null),
          id: change.resource_id,
          siteId: change.site_id,
          action: change.action,
          revision: change.revision,
          dueAt: change.due_at.toISOString(),
          requestedBy: change.requested_by,
          workflowId: change.workflow_id,
          runId: change.run_id,
          uiUrl: workflowUiUrl(temporal, change.workflow_id, change.run_id),
          canCancel: hasRole(identity, [releaseRoles.get(change.resource_id) ?? componentType(change.component_type)?.authorRole ?? 'EDITOR']),
        }));
      },
    }),
  ];
}

/** One approval by its correlation id: read it with its run's progress, or decide its current stage. */
function approvalItemRoutes({ db, temporal }: AppDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/workflow/approvals/:correlationId',
      tag: 'workflow',
      summary: 'One approval with its decisions',
      access: access.user,
      params: CorrelationParams,
      responses: { 200: { description: 'the approval', schema: ApprovalWithProgressSchema } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params, identity }) => {
        const approval = await findApproval(db, params.correlationId);
        if (!approval) throw notFound(`No approval ${params.correlationId}.`);
        requireSiteMember(identity, approval.site_id);
        // The publish workflow's own view (its `progress` query), or null when it cannot be asked.
        const progress = await temporal.client.workflow
          .getHandle(approval.workflow_id)
          .query(publishProgressQuery)
          .catch(() => null);
        ctx.body = { ...presentApproval(approval), progress };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/workflow/approvals/:correlationId/decide',
      tag: 'workflow',
      summary: "Decide the current stage of an approval (that stage's role in the site, or ADMIN; never the requester, and one stage per person)",
      access: access.user,
      params: CorrelationParams,
      body: DecideBody,
      responses: { 200: { description: 'the approval, with the publish run that took the decision', schema: DecidedSchema } },
      errors: ['NOT_FOUND', 'ALREADY_DECIDED', 'SELF_APPROVAL_FORBIDDEN', 'APPROVER_ALREADY_DECIDED', 'DECISION_NOT_RECORDED', 'TEMPORAL_UNAVAILABLE'],
      handler: async (ctx, { params, body, identity }) => {
        const user = identity;
        const proposed = await proposeDecision(db, {
          correlationId: params.correlationId,
          decider: { id: user.id, name: user.name || null, roles: user.roles, sites: user.sites },
          decision: body.decision,
          comment: body.comment ?? null,
        });
        const run = await deliverDecision(temporal, proposed);
        ctx.body = { ...presentApproval((await findApproval(db, params.correlationId))!), ...run };
      },
    }),
  ];
}

/** The approvals module: policies, the internal submit endpoint, the managers' queue and the decide endpoint. */
export function approvalRoutes(deps: AppDeps): AnyRoute[] {
  // Keep this order: the router takes the first match, and `/approvals/:correlationId` would take `policies` or `mine` for an id.
  return [...policyRoutes(deps), ...submitRoutes(deps), ...queueRoutes(deps), ...scheduledRoutes(deps), ...approvalItemRoutes(deps)];
}
