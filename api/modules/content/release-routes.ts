import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { hasRole, Identity, requireSiteMember } from '../../http/identity';
import { Revision, SiteId } from '../../http/common-schemas';
import { pageQueryFields, pageSchema } from '../../http/pagination';
import { conflict, ErrorCode, forbidden, notFound } from '../../../lib/errors';
import { callbackMismatch, RELEASE, RELEASE_COLLECTION } from '../../../domain/approvals';
import { COMPONENT_TYPES, componentType } from '../../../data/content/component-types';
import { findComponent } from '../../../data/content/components';
import { latestRevision, rowAtRevision } from '../../../data/content/revisions';
import {
  createRelease,
  deleteRelease,
  findRelease,
  itemCounts,
  itemsOfRelease,
  listReleases,
  MAX_RELEASE_ITEMS,
  publishRelease,
  putReleaseItem,
  releaseAuthorRole,
  ReleaseFailure,
  ReleaseRow,
  refuseLockedRelease,
  removeReleaseItem,
  setReleaseStatus,
} from '../../../data/content/releases';
import { findApproval } from '../../../data/approvals/approvals';
import { openScheduledChange, openScheduledChangesOf } from '../../../data/approvals/scheduled-changes';
import { ComponentTypeName } from '../approvals/schemas';
import { actorOf } from './collection-routes';
import { CallbackBody, PendingApprovalAnswer, ScheduledAnswer } from './collection-schemas';
import { cancelSchedule, dueTimeOf, PublishTarget, startPublish } from './start-publish';
import { ReleaseParams, ItemParams, ReleaseSummary, ReleaseSchema, PublishReleaseBody, PublishedReleaseAnswer } from './release-schemas';
import { releasePresenters } from './release-presenters';

/** What publishing or scheduling a release may be refused with. */
const PUBLISH_REFUSALS: ErrorCode[] = [
  'NOT_FOUND',
  'APPROVAL_PENDING',
  'CHANGE_SCHEDULED',
  'RELEASE_LOCKED',
  'RELEASE_FAILED',
  'WORKFLOW_DEFINITION_NOT_PUBLISHED',
  'TEMPORAL_UNAVAILABLE',
];

/** What every release route shares: the release or 404, the checks on who may change it, and its answer. */
function releasePlace(deps: AppDeps) {
  const { db } = deps;
  const EDITOR = access.roles('EDITOR');
  const { present, presentWhole } = releasePresenters(db);
  /** The release, in a site the caller belongs to; 404 for an unknown id. */
  const memberRelease = async (id: string, identity: Identity | null): Promise<ReleaseRow> => {
    const release = await findRelease(db, id);
    if (!release) throw notFound(`No release ${id}.`);
    if (identity) requireSiteMember(identity, release.site_id);
    return release;
  };
  /** Items change only while the release is not locked and nothing waits for its time (cancel the schedule first). */
  const refuseItemChanges = async (release: ReleaseRow) => {
    refuseLockedRelease(release);
    if (await openScheduledChange(db, RELEASE, release.id))
      throw conflict('CHANGE_SCHEDULED', `Release ${release.id} is scheduled: cancel it first (POST …/cancel).`);
  };
  const targetOf = (release: ReleaseRow): PublishTarget => ({
    typeName: RELEASE,
    collection: RELEASE_COLLECTION,
    id: release.id,
    siteId: release.site_id,
    title: release.name,
    revision: release.version,
  });
  const failed = (failures: ReleaseFailure[]) =>
    conflict(
      'RELEASE_FAILED',
      `Nothing of the release was published: ${failures.map((failure) => failure.message).join('; ')}`,
      failures.map((failure) => ({ path: failure.itemId ? `items.${failure.itemId}` : 'release', message: failure.message })),
    );

  /** A release the caller may publish: in their site, holding items, not published or waiting already. */
  async function publishable(id: string, identity: Identity): Promise<ReleaseRow> {
    const release = await memberRelease(id, identity);
    if (release.status === 'PUBLISHED' || release.status === 'PENDING_APPROVAL') {
      throw conflict(release.status === 'PUBLISHED' ? 'RELEASE_LOCKED' : 'APPROVAL_PENDING', `Release ${id} is ${release.status}.`);
    }
    const items = await itemsOfRelease(db, id);
    if (items.length === 0)
      throw failed([{ itemId: null, componentType: null, componentId: null, reason: 'RELEASE_EMPTY', message: 'The release holds no item.' }]);
    await requireReleaseAuthor(release, identity);
    return release;
  }

  /** Items of an ADMIN-only type are published, scheduled, cancelled and taken out only by an ADMIN, as they would be alone. */
  async function requireReleaseAuthor(release: ReleaseRow, identity: Identity): Promise<void> {
    const role = await releaseAuthorRole(db, release.id);
    if (!hasRole(identity, [role])) throw forbidden(`Release ${release.id} holds an item only an ${role} publishes.`);
  }
  return { deps, db, EDITOR, present, presentWhole, memberRelease, refuseItemChanges, targetOf, failed, publishable, requireReleaseAuthor };
}
type ReleasePlace = ReturnType<typeof releasePlace>;

/** The types a release may hold, and releases created and listed. */
function listAndCreateRoutes({ db, EDITOR, present, presentWhole }: ReleasePlace): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: `${RELEASE_COLLECTION}/item-types`,
      tag: 'content',
      summary: 'The component types a release may hold, with their collections and who publishes them',
      access: access.user,
      responses: {
        200: {
          description: 'the registered types',
          schema: Type.Object({
            items: Type.Array(Type.Object({ type: Type.String(), collection: Type.String(), content: Type.Boolean(), authorRole: Type.String() })),
          }),
        },
      },
      errors: [],
      handler: async (ctx) => {
        ctx.body = {
          items: COMPONENT_TYPES.map((type) => ({
            type: type.type,
            collection: type.collection,
            content: type.content,
            authorRole: type.authorRole ?? 'EDITOR',
          })),
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: RELEASE_COLLECTION,
      tag: 'content',
      summary: 'Create a release: a named set of items published together',
      access: EDITOR,
      body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), siteId: SiteId }, { additionalProperties: false }),
      responses: { 201: { description: 'the release, empty', schema: ReleaseSchema } },
      errors: [],
      handler: async (ctx, { body, identity }) => {
        requireSiteMember(identity, body.siteId);
        ctx.status = 201;
        ctx.body = await presentWhole(await createRelease(db, { siteId: body.siteId, name: body.name.trim() || body.name, actor: actorOf(identity) }));
      },
    }),
    defineRoute({
      method: 'get',
      path: RELEASE_COLLECTION,
      tag: 'content',
      summary: "A site's releases, newest first",
      access: access.user,
      query: Type.Object({ ...pageQueryFields, siteId: SiteId }),
      responses: { 200: { description: 'a page of releases', schema: pageSchema(ReleaseSummary) } },
      errors: [],
      handler: async (ctx, { query, identity }) => {
        requireSiteMember(identity, query.siteId);
        const page = await listReleases(db, { siteId: query.siteId, page: query });
        const ids = page.items.map((release) => release.id);
        const [counts, scheduled] = await Promise.all([itemCounts(db, ids), openScheduledChangesOf(db, RELEASE, ids)]);
        const items = await Promise.all(page.items.map((release) => present(release, counts.get(release.id) ?? 0, scheduled.get(release.id))));
        ctx.body = { items, nextCursor: page.nextCursor };
      },
    }),
  ];
}

/** One release: read and deleted. */
function oneReleaseRoutes({ db, EDITOR, presentWhole, memberRelease, refuseItemChanges, requireReleaseAuthor }: ReleasePlace): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: `${RELEASE_COLLECTION}/:id`,
      tag: 'content',
      summary: 'One release with its items',
      access: access.user,
      params: ReleaseParams,
      responses: { 200: { description: 'the release', schema: ReleaseSchema } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params, identity }) => {
        ctx.body = await presentWhole(await memberRelease(params.id, identity));
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${RELEASE_COLLECTION}/:id`,
      tag: 'content',
      summary: 'Delete a release that was never published (a published one is a record and stays)',
      access: EDITOR,
      params: ReleaseParams,
      responses: { 204: { description: 'deleted' } },
      errors: ['NOT_FOUND', 'RELEASE_LOCKED', 'CHANGE_SCHEDULED'],
      handler: async (ctx, { params, identity }) => {
        const release = await memberRelease(params.id, identity);
        await requireReleaseAuthor(release, identity);
        await refuseItemChanges(release);
        await deleteRelease(db, release.id);
        ctx.status = 204;
      },
    }),
  ];
}

/** The items of a release: added, moved to another revision, and taken out. */
function itemRoutes({ db, EDITOR, presentWhole, memberRelease, refuseItemChanges, requireReleaseAuthor }: ReleasePlace): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: `${RELEASE_COLLECTION}/:id/items`,
      tag: 'content',
      summary: `Add an item at a revision (its latest when left out), or change the revision of one the release holds; at most ${MAX_RELEASE_ITEMS}`,
      access: EDITOR,
      params: ReleaseParams,
      body: Type.Object({ type: ComponentTypeName, id: Type.String({ format: 'uuid' }), revision: Type.Optional(Revision) }, { additionalProperties: false }),
      responses: { 201: { description: 'the release with its items', schema: ReleaseSchema } },
      errors: ['NOT_FOUND', 'REVISION_NOT_FOUND', 'RELEASE_LOCKED', 'RELEASE_FULL', 'CHANGE_SCHEDULED', 'ARCHIVE_READ_ONLY'],
      handler: async (ctx, { params, body, identity }) => {
        const release = await memberRelease(params.id, identity);
        await requireReleaseAuthor(release, identity);
        const type = componentType(body.type)!;
        // Publishing an item through a release takes the right to publish it alone: approval chains are ADMIN's.
        if (!hasRole(identity, [type.authorRole ?? 'EDITOR'])) throw forbiddenType(body.type, type.authorRole ?? 'EDITOR');
        const row = await findComponent(db, type, body.id);
        if (!row || row.site_id !== release.site_id) throw notFound(`Site ${release.site_id} has no ${body.type} ${body.id}.`);
        const why = type.refuseWrite?.(row);
        if (why) throw forbidden(why, 'ARCHIVE_READ_ONLY');
        const revision = body.revision ?? ((await latestRevision(db, type, body.id)) as number);
        if (!(await rowAtRevision(db, type, body.id, revision))) throw notFound(`${body.type} ${body.id} has no revision ${revision}.`, 'REVISION_NOT_FOUND');
        await refuseItemChanges(release);
        await putReleaseItem(db, { releaseId: release.id, componentType: body.type, componentId: body.id, revision, actor: actorOf(identity) });
        ctx.status = 201;
        ctx.body = await presentWhole((await findRelease(db, release.id))!);
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${RELEASE_COLLECTION}/:id/items/:itemId`,
      tag: 'content',
      summary: 'Take an item out of a release',
      access: EDITOR,
      params: ItemParams,
      responses: { 204: { description: 'taken out' } },
      errors: ['NOT_FOUND', 'RELEASE_LOCKED', 'CHANGE_SCHEDULED'],
      handler: async (ctx, { params, identity }) => {
        const release = await memberRelease(params.id, identity);
        await requireReleaseAuthor(release, identity);
        await refuseItemChanges(release);
        if (!(await removeReleaseItem(db, { releaseId: release.id, itemId: params.itemId })))
          throw notFound(`Release ${release.id} holds no item ${params.itemId}.`);
        ctx.status = 204;
      },
    }),
  ];
}

/** Publish now or at a set time, and the cancel of what waits for its time. */
function publishRoutes({ deps, db, EDITOR, memberRelease, targetOf, failed, publishable, requireReleaseAuthor }: ReleasePlace): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: `${RELEASE_COLLECTION}/:id/publish`,
      tag: 'content',
      summary: 'Publish every item of the release at its revision in one transaction, or none; through one approval when any item needs one',
      access: EDITOR,
      params: ReleaseParams,
      body: PublishReleaseBody,
      bodyOptional: true,
      responses: {
        200: { description: 'published, every item', schema: PublishedReleaseAnswer },
        202: { description: 'waiting for approval', schema: PendingApprovalAnswer },
      },
      errors: PUBLISH_REFUSALS,
      handler: async (ctx, { params, body, identity }) => {
        const release = await publishable(params.id, identity);
        const answer = await startPublish(deps, { target: targetOf(release), identity, comment: body?.comment ?? null });
        if (answer.status === 200) {
          const after = (await findRelease(db, release.id))!;
          if (after.status !== 'PUBLISHED') throw failed(after.failure ?? []);
          ctx.body = { status: 'PUBLISHED', version: release.version, workflowId: answer.body.workflowId, runId: answer.body.runId, uiUrl: answer.body.uiUrl };
          return;
        }
        ctx.status = answer.status;
        ctx.body = answer.body;
      },
    }),
    defineRoute({
      method: 'post',
      path: `${RELEASE_COLLECTION}/:id/schedule`,
      tag: 'content',
      summary: 'Publish the release at a set time (a durable timer), after its approval when one is needed',
      access: EDITOR,
      params: ReleaseParams,
      body: Type.Object({ at: Type.String({ format: 'date-time', maxLength: 40 }) }, { additionalProperties: false }),
      responses: { 202: { description: 'waiting for its time, or for approval', schema: Type.Union([ScheduledAnswer, PendingApprovalAnswer]) } },
      errors: PUBLISH_REFUSALS,
      handler: async (ctx, { params, body, identity }) => {
        const dueAt = dueTimeOf(body.at, 'at');
        const release = await publishable(params.id, identity);
        const answer = await startPublish(deps, { target: targetOf(release), identity, comment: null, action: 'PUBLISH', dueAt });
        ctx.status = 202;
        ctx.body = answer.body;
      },
    }),
    ...(['post', 'delete'] as const).map((method) =>
      defineRoute({
        method,
        path: method === 'post' ? `${RELEASE_COLLECTION}/:id/cancel` : `${RELEASE_COLLECTION}/:id/schedule`,
        tag: 'content',
        summary: "Cancel the release's scheduled publish before its time",
        access: EDITOR,
        params: ReleaseParams,
        responses: { 200: { description: 'cancelled', schema: ScheduledAnswer } },
        errors: ['NOT_FOUND', 'APPROVAL_PENDING', 'SCHEDULE_PASSED', 'TEMPORAL_UNAVAILABLE'],
        handler: async (ctx, { params, identity }) => {
          await requireReleaseAuthor(await memberRelease(params.id, identity), identity);
          ctx.body = await cancelSchedule(deps, { typeName: RELEASE, id: params.id, identity });
        },
      }),
    ),
  ];
}

/** The internal approval callback: the publish workflow reports the approval's outcome here. */
function callbackRoutes({ db, presentWhole, memberRelease }: ReleasePlace): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: `${RELEASE_COLLECTION}/:id/approval-callback`,
      tag: 'content',
      summary: "The approval's outcome for a release (the publish workflow): APPROVED publishes every item, or none",
      access: access.internal,
      params: ReleaseParams,
      body: CallbackBody,
      responses: { 200: { description: 'the release after the decision (FAILED, with its reasons, when an item stopped it)', schema: ReleaseSchema } },
      errors: ['NOT_FOUND', 'APPROVAL_MISMATCH'],
      handler: async (ctx, { params, body }) => {
        const release = await memberRelease(params.id, null);
        // As for one item: only what an approval decided, for this release and version, goes through.
        const approval = await findApproval(db, body.correlationId);
        const mismatch = callbackMismatch(approval, { componentType: RELEASE, resourceId: params.id, revision: body.revision, decision: body.decision });
        if (mismatch) throw conflict('APPROVAL_MISMATCH', `Approval ${body.correlationId} ${mismatch}.`);
        // Once applied, an approval is spent: the release has left PENDING_APPROVAL, and a callback sent again
        // (the activity is retried) changes nothing and is answered as done.
        const last = approval?.decisions[approval.decisions.length - 1];
        // Only the approval the release waits on, for the version it was asked about: an older approval's
        // callback, replayed, changes nothing.
        const pending = release.status === 'PENDING_APPROVAL' && release.pending_correlation_id === body.correlationId && release.version === body.revision;
        if (pending && body.decision === 'APPROVED') {
          // A failure is recorded on the release and answered 200: retrying the callback would not mend it.
          await publishRelease(db, {
            id: release.id,
            version: body.revision,
            actor: last ? { id: last.decidedBy, name: last.decidedByName } : { id: 'approvals', name: null },
          });
        }
        if (pending && body.decision === 'REJECTED') {
          await setReleaseStatus(db, { id: release.id, status: 'REJECTED', onlyFrom: 'PENDING_APPROVAL' });
        }
        ctx.body = await presentWhole((await findRelease(db, release.id))!);
      },
    }),
  ];
}

/**
 * Releases: a named set of items of any types, each at a chosen revision, published in one transaction or
 * not at all; now, at a set time (a durable timer), or through one approval for the whole release.
 */
export function releaseRoutes(deps: AppDeps): AnyRoute[] {
  const place = releasePlace(deps);
  return [...listAndCreateRoutes(place), ...oneReleaseRoutes(place), ...itemRoutes(place), ...publishRoutes(place), ...callbackRoutes(place)];
}

/** Items of an ADMIN-only type (approval chains) are an ADMIN's to publish, in a release just as on their own. */
const forbiddenType = (type: string, role: string) => forbidden(`Only ${role} publishes ${type}, in a release just as on its own.`);
