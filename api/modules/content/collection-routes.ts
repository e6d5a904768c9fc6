import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { Identity, requireSiteMember } from '../../http/identity';
import { presentPage } from '../../http/pagination';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { conflict, notFound } from '../../../lib/errors';
import { callbackMismatch } from '../../../domain/approvals';
import { jsonDiff } from '../../../lib/json-diff';
import { findApproval, openApprovalOf } from '../../../data/approvals/approvals';
import { COMPONENT_TYPES, ComponentType } from '../../../data/content/component-types';
import {
  createComponent,
  deleteComponent,
  editComponent,
  findComponent,
  listComponents,
  presentComponent,
  publishComponentRevision,
  restoreComponent,
  setComponentStatus,
  snapshotOf,
} from '../../../data/content/components';
import { historyOf } from '../../../data/content/revisions';
import type { Actor } from '../../../domain/actor';
import {
  ArchiveBody,
  CallbackBody,
  CompareQuery,
  ComparisonSchema,
  createBody,
  editBody,
  PageQuery,
  entityPageSchema,
  HistorySchema,
  IdParams,
  ListQuery,
  PendingApprovalAnswer,
  PublishBody,
  PublishedAnswer,
  RevisionParams,
  revisionSchema,
  ScheduledAnswer,
} from './collection-schemas';
import { cancelSchedule, componentTarget, dueTimeOf, startPublish } from './start-publish';
import { collectionPlace, CollectionPlace } from './collection-place';

export const actorOf = (identity: Identity): Actor => ({ id: identity.id, name: identity.name || null });

/** Create, list and delete: a type may bring its own of these (`ownRoutes`), and then they are left out here. */
function replaceableRoutes({ db, type, tag, label, AUTHOR, entity, valuesOf, slugTaken, memberEntity }: CollectionPlace): AnyRoute[] {
  const routes: AnyRoute[] = [];
  if (!type.ownRoutes?.includes('create')) {
    routes.push(
      defineRoute({
        method: 'post',
        path: type.collection,
        tag,
        summary: `Create a ${label} draft`,
        access: AUTHOR,
        body: createBody(type),
        responses: { 201: { description: 'the draft', schema: entity } },
        errors: ['COMPONENT_SLUG_TAKEN'],
        handler: async (ctx, { body: fields, identity }) => {
          const body = fields as Record<string, unknown> & { siteId: string };
          requireSiteMember(identity, body.siteId);
          const values = valuesOf(body);
          for (const field of type.fields)
            if (field.writable && !(field.name in values.fields) && field.default !== undefined) values.fields[field.name] = field.default;
          const created = await slugTaken(() => createComponent(db, { type, siteId: body.siteId, values, actor: actorOf(identity) }));
          ctx.status = 201;
          ctx.body = presentComponent(type, created.row);
        },
      }),
    );
  }
  if (!type.ownRoutes?.includes('list')) {
    routes.push(
      defineRoute({
        method: 'get',
        path: type.collection,
        tag,
        summary: `The ${label} drafts of a site, newest first`,
        access: access.user,
        query: ListQuery,
        responses: { 200: { description: 'a page of drafts', schema: entityPageSchema(type) } },
        errors: [],
        handler: async (ctx, { query, identity }) => {
          requireSiteMember(identity, query.siteId);
          const page = await listComponents(db, { type, siteId: query.siteId, status: query.status, page: query });
          ctx.body = presentPage(page, (row) => presentComponent(type, row));
        },
      }),
    );
  }
  if (!type.ownRoutes?.includes('delete')) {
    routes.push(
      defineRoute({
        method: 'delete',
        path: `${type.collection}/:id`,
        tag,
        summary: `Delete a ${label}; its history stays in the audit`,
        access: AUTHOR,
        params: IdParams,
        responses: { 204: { description: 'deleted' } },
        errors: ['NOT_FOUND', 'APPROVAL_PENDING'],
        handler: async (ctx, { params, identity }) => {
          await memberEntity(params.id, identity);
          if (await openApprovalOf(db, type.type, params.id)) throw conflict('APPROVAL_PENDING', `${label} ${params.id} is waiting for approval.`);
          if (!(await deleteComponent(db, { type, id: params.id, actor: actorOf(identity) }))) throw notFound(`No ${label} ${params.id}.`);
          ctx.status = 204;
        },
      }),
    );
  }
  return routes;
}

/** A member's latest draft, at `…/:id` and its `suffix`: the same answer, for the callers `routeAccess` lets in. */
function draftRoute({ type, tag, entity, memberEntity }: CollectionPlace, suffix: string, summary: string, routeAccess: typeof access.user) {
  return defineRoute({
    method: 'get',
    path: `${type.collection}/:id${suffix}`,
    tag,
    summary,
    access: routeAccess,
    params: IdParams,
    responses: { 200: { description: 'the draft', schema: entity } },
    errors: ['NOT_FOUND'],
    handler: async (ctx, { params, identity }) => {
      ctx.body = presentComponent(type, await memberEntity(params.id, identity));
    },
  });
}

/** The latest draft: read and edited. */
function draftRoutes(place: CollectionPlace): AnyRoute[] {
  const { db, type, tag, label, AUTHOR, entity, writeRefusals, valuesOf, slugTaken, memberEntity, refuseWrite, written } = place;
  return [
    draftRoute(place, '', `The latest draft of a ${label}`, access.user),
    defineRoute({
      method: 'put',
      path: `${type.collection}/:id`,
      tag,
      summary: `Edit a ${label}: a new revision of the draft; what is published does not change`,
      access: AUTHOR,
      params: IdParams,
      body: editBody(type),
      responses: { 200: { description: 'the draft', schema: entity } },
      errors: ['NOT_FOUND', 'COMPONENT_SLUG_TAKEN', ...writeRefusals],
      handler: async (ctx, { params, body, identity }) => {
        const { comment, ...edited } = body as Record<string, unknown> & { comment?: string };
        const values = valuesOf(edited);
        refuseWrite(await memberEntity(params.id, identity), values.fields);
        ctx.body = written(
          await slugTaken(() => editComponent(db, { type, id: params.id, values, actor: actorOf(identity), comment: comment?.trim() || null })),
          params.id,
        );
      },
    }),
  ];
}

/** The revisions: listed, read one at a time, compared, and restored as a new draft. */
function revisionRoutes(place: CollectionPlace): AnyRoute[] {
  const { db, type, tag, label, AUTHOR, entity, writeRefusals, slugTaken, memberEntity, refuseWrite, revisionOr404, written } = place;
  return [
    defineRoute({
      method: 'get',
      path: `${type.collection}/:id/history`,
      tag,
      summary: `The revisions of a ${label}, newest first`,
      access: access.user,
      params: IdParams,
      query: PageQuery,
      responses: { 200: { description: 'a page of the history', schema: HistorySchema } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params, query, identity }) => {
        await memberEntity(params.id, identity);
        ctx.body = await historyOf(db, type, params.id, query);
      },
    }),
    defineRoute({
      method: 'get',
      path: `${type.collection}/:id/history/:rev`,
      tag,
      summary: `A ${label} as it was at one revision`,
      access: access.user,
      params: RevisionParams,
      responses: { 200: { description: 'the entity at that revision', schema: revisionSchema(type) } },
      errors: ['NOT_FOUND', 'REVISION_NOT_FOUND'],
      handler: async (ctx, { params, identity }) => {
        await memberEntity(params.id, identity);
        const row = await revisionOr404(params.id, params.rev);
        ctx.body = { ...presentComponent(type, row), rev: params.rev };
      },
    }),
    defineRoute({
      method: 'get',
      path: `${type.collection}/:id/compare`,
      tag,
      summary: `The field-level differences of a ${label} between a revision and another, the draft or what is published`,
      access: access.user,
      params: IdParams,
      query: CompareQuery,
      responses: { 200: { description: 'the changed fields, as JSON pointers', schema: ComparisonSchema } },
      errors: ['NOT_FOUND', 'REVISION_NOT_FOUND'],
      handler: async (ctx, { params, query, identity }) => {
        const current = await memberEntity(params.id, identity);
        const target = query.to ?? 'draft';
        const before = await revisionOr404(params.id, query.from);
        let after: Record<string, unknown>;
        if (target === 'draft') after = current;
        else if (target === 'published') {
          if (current.published_rev === null) throw notFound(`${label} ${params.id} has never been published.`, 'REVISION_NOT_FOUND');
          after = await revisionOr404(params.id, current.published_rev as number);
        } else after = await revisionOr404(params.id, Number(target));
        ctx.body = {
          from: query.from,
          to: /^\d+$/.test(target) ? Number(target) : target,
          changes: jsonDiff(snapshotOf(type, before), snapshotOf(type, after)),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: `${type.collection}/:id/restore/:rev`,
      tag,
      summary: `Make a ${label}'s draft the state at a revision, as a new revision`,
      access: AUTHOR,
      params: RevisionParams,
      responses: { 200: { description: 'the restored draft', schema: entity } },
      errors: ['NOT_FOUND', 'REVISION_NOT_FOUND', 'COMPONENT_SLUG_TAKEN', ...writeRefusals],
      handler: async (ctx, { params, identity }) => {
        const current = await memberEntity(params.id, identity);
        const then = await revisionOr404(params.id, params.rev);
        refuseWrite(current, then);
        ctx.body = written(await slugTaken(() => restoreComponent(db, { type, id: params.id, rev: params.rev, actor: actorOf(identity) })), params.id);
      },
    }),
  ];
}

/** Publish and archive, now or at a set time, and the cancel of what waits for its time. */
function publishRoutes({ deps, db, type, tag, label, AUTHOR, entity, writeRefusals, memberEntity, refuseWrite, written }: CollectionPlace): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: `${type.collection}/:id/publish`,
      tag,
      summary: `Publish a ${label}'s latest revision, through approval when a policy asks for one; with \`publishAt\`, at that time`,
      access: AUTHOR,
      params: IdParams,
      body: PublishBody,
      bodyOptional: true,
      responses: {
        200: { description: 'published', schema: PublishedAnswer },
        202: { description: 'waiting for approval, or for its time', schema: Type.Union([PendingApprovalAnswer, ScheduledAnswer]) },
      },
      errors: ['NOT_FOUND', 'APPROVAL_PENDING', 'CHANGE_SCHEDULED', 'WORKFLOW_DEFINITION_NOT_PUBLISHED', 'TEMPORAL_UNAVAILABLE', ...writeRefusals],
      handler: async (ctx, { params, body, identity }) => {
        const dueAt = dueTimeOf(body.publishAt, 'publishAt');
        const row = await memberEntity(params.id, identity);
        refuseWrite(row);
        const target = await componentTarget(db, type, row);
        const answer = await startPublish(deps, { target, identity, comment: body.comment ?? null, action: 'PUBLISH', dueAt });
        ctx.status = answer.status;
        ctx.body = answer.body;
      },
    }),
    defineRoute({
      method: 'post',
      path: `${type.collection}/:id/archive`,
      tag,
      summary: `Archive a ${label}: the runtime stops serving it until it is published again; with \`archiveAt\`, at that time`,
      access: AUTHOR,
      params: IdParams,
      body: ArchiveBody,
      bodyOptional: true,
      responses: { 200: { description: 'archived', schema: entity }, 202: { description: 'scheduled', schema: ScheduledAnswer } },
      errors: ['NOT_FOUND', 'APPROVAL_PENDING', 'CHANGE_SCHEDULED', 'TEMPORAL_UNAVAILABLE', ...writeRefusals],
      handler: async (ctx, { params, body, identity }) => {
        const dueAt = dueTimeOf(body.archiveAt, 'archiveAt');
        const row = await memberEntity(params.id, identity);
        refuseWrite(row);
        if (dueAt) {
          const answer = await startPublish(deps, { target: await componentTarget(db, type, row), identity, comment: null, action: 'ARCHIVE', dueAt });
          ctx.status = answer.status;
          ctx.body = answer.body;
          return;
        }
        if (await openApprovalOf(db, type.type, params.id)) throw conflict('APPROVAL_PENDING', `${label} ${params.id} is waiting for approval.`);
        ctx.body = written(await setComponentStatus(db, { type, id: params.id, status: 'ARCHIVED', actor: actorOf(identity) }), params.id);
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${type.collection}/:id/schedule`,
      tag,
      summary: `Cancel the ${label}'s scheduled publish or archive before its time`,
      access: AUTHOR,
      params: IdParams,
      responses: { 200: { description: 'cancelled', schema: ScheduledAnswer } },
      errors: ['NOT_FOUND', 'APPROVAL_PENDING', 'SCHEDULE_PASSED', 'TEMPORAL_UNAVAILABLE'],
      handler: async (ctx, { params, identity }) => {
        await memberEntity(params.id, identity);
        ctx.body = await cancelSchedule(deps, { typeName: type.type, id: params.id, identity });
      },
    }),
  ];
}

/** The internal approval callback: the publish workflow reports the approval's outcome here. */
function callbackRoutes({ db, type, tag, label, entity, written }: CollectionPlace): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: `${type.collection}/:id/approval-callback`,
      tag,
      summary: `The approval's outcome for a ${label} (the publish workflow): APPROVED publishes exactly that revision`,
      access: access.internal,
      params: IdParams,
      body: CallbackBody,
      responses: { 200: { description: 'the entity after the decision', schema: entity } },
      errors: ['NOT_FOUND', 'REVISION_NOT_FOUND', 'APPROVAL_MISMATCH'],
      handler: async (ctx, { params, body }) => {
        // The revision that publishes (or rejects) is the last decider's.
        const approval = await findApproval(db, body.correlationId);
        // The internal token is not a licence to publish: only what an approval decided, for its own item and
        // revision, goes through (a run started on Temporal directly names whatever it likes).
        const mismatch = callbackMismatch(approval, { componentType: type.type, resourceId: params.id, revision: body.revision, decision: body.decision });
        if (mismatch) throw conflict('APPROVAL_MISMATCH', `Approval ${body.correlationId} ${mismatch}.`);
        // Once applied, an approval is spent: a callback sent again may repeat what it did (the activity is
        // retried), never publish its revision over a newer one or bring back an archived item.
        const current = await findComponent(db, type, params.id);
        const repeat = current?.status === 'PUBLISHED' && current.published_rev === body.revision;
        if (body.decision === 'APPROVED' && current?.status !== 'PENDING_APPROVAL' && !repeat) {
          throw conflict('APPROVAL_MISMATCH', `Approval ${body.correlationId} was applied already: ${type.type} ${params.id} is ${current?.status ?? 'gone'}.`);
        }
        const last = approval?.decisions[approval.decisions.length - 1];
        const actor: Actor = last ? { id: last.decidedBy, name: last.decidedByName } : { id: 'approvals', name: null };
        const result =
          body.decision === 'APPROVED'
            ? await publishComponentRevision(db, { type, id: params.id, rev: body.revision, actor })
            : await setComponentStatus(db, { type, id: params.id, status: 'REJECTED', actor, onlyFrom: 'PENDING_APPROVAL' });
        ctx.body = written(result, params.id);
      },
    }),
  ];
}

/**
 * The endpoints every versioned collection has, built from the type's registration:
 * create, list, get, edit, delete, history, a revision, restore, publish, archive, preview, and the
 * internal approval callback.
 */
export function collectionRoutes(deps: AppDeps, type: ComponentType): AnyRoute[] {
  const place = collectionPlace(deps, type);
  return [
    ...replaceableRoutes(place),
    ...draftRoutes(place),
    ...revisionRoutes(place),
    ...publishRoutes(place),
    // The same draft as GET …/:id, for editors only: the console's preview pane opens it.
    draftRoute(place, '/preview', `The ${place.label}'s draft as it would be published`, access.roles('EDITOR')),
    ...callbackRoutes(place),
  ];
}

/** Every registered type's collection. */
export function componentRoutes(deps: AppDeps): AnyRoute[] {
  return COMPONENT_TYPES.flatMap((type) => collectionRoutes(deps, type));
}
