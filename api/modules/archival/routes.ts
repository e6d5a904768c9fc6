import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { resourceRoutes } from '../../http/resource-routes';
import { badRequest, conflict, notFound } from '../../../lib/errors';
import {
  deleteArchivePolicy,
  findArchivePolicy,
  listArchivePolicies,
  PolicySinkValues,
  resolveRetention,
  savePolicyWithSink,
} from '../../../data/archival/policies';
import { Identity } from '../../http/identity';
import { startWorkflow, StartedWorkflow } from '../../../temporal-config/client';
import { TaskQueues } from '../../../domain/task-queues';
import { LOG_TYPES, LogType } from '../../../domain/archival';
import {
  ARCHIVE_RESTORE_WORKFLOW,
  ARCHIVE_RUN_WORKFLOW,
  ArchiveRestoreWorkflow,
  archiveRestoreWorkflowId,
  ArchiveRunWorkflow,
  archiveRunWorkflowId,
} from '../../../workflows/archival/definitions';
import { archivedFileOfAsset } from '../../../data/archival/restore';
import { assetExists } from '../../../data/assets/assets';
import { SearchAttributeKeys } from '../../../domain/search-attributes';
import { archiveRestoreReport, archiveRunReport } from './archive-runs';
import { presentHold, presentPolicy, presentStoreKeys } from './presenters';
import { ensureArchiveStore, findArchiveStoreAt, normalizedEndpoint } from '../../../data/archival/archive-stores';
import { assertOutboundAllowed, outboundPolicyOf } from '../../../adapters/messaging/outbound';
import { DeliveryFailure } from '../../../adapters/messaging/delivery-failure';
import { Db } from '../../../data/db';
import { Static } from '@sinclair/typebox';
import { secretKeysOf } from '../../../lib/secrets';
import { findArchiveHold, holdArchives, listArchiveHolds, releaseArchiveHold } from '../../../data/archival/holds';
import { actorOf } from '../content/collection-routes';
import {
  ArchiveRestoreSchema,
  ArchiveSinkSchema,
  SinkCredentialsBody,
  SinkCredentialsSchema,
  CreateHoldBody,
  HoldIdParams,
  HoldPageSchema,
  HoldSchema,
  ListHoldsQuery,
  ReleaseHoldQuery,
  ArchiveRunSchema,
  CreatePolicyBody,
  RestoreBody,
  RestoreParams,
  RestoreStartedSchema,
  ListPoliciesQuery,
  PolicyPageSchema,
  PolicyIdParams,
  PolicySchema,
  ResolvedSchema,
  ResolveQuery,
  RunBody,
  RunParams,
  RunsStartedSchema,
  UpdatePolicyBody,
} from './schemas';
import { fairShareOf } from '../../../domain/fairness';

const RUN_IN_PROGRESS = 'ARCHIVE_RUN_IN_PROGRESS';

/** What every archival route shares: the deps, whether a run is going, and a policy's sink from its body. */
function archivalPlace({ db, temporal, config }: AppDeps) {
  const isRunning = async (logType: LogType): Promise<boolean> => {
    try {
      return (await temporal.client.workflow.getHandle(archiveRunWorkflowId(logType)).describe()).status.name === 'RUNNING';
    } catch {
      return false;
    }
  };
  /**
   * A policy's sink columns from its body, in the policy's own transaction: `s3` only beside `sink: "s3"`; a
   * store named is checked by the outbound guard and recorded (its keys sealed) with the policy, or not at
   * all; none named is the platform's.
   */
  const sinkOf = async (
    trx: Db,
    body: { sink?: 'file' | 's3' | null; s3?: Static<typeof CreatePolicyBody>['s3'] },
    identity: Identity,
  ): Promise<PolicySinkValues> => {
    if (body.sink !== 's3') {
      if (body.s3) throw badRequest('VALIDATION_FAILED', 'An s3 store is given only with "sink": "s3".');
      return body.sink === undefined ? {} : { sink: body.sink };
    }
    if (!body.s3) {
      if (!config.archive.s3)
        throw badRequest('VALIDATION_FAILED', "With no s3 store given the policy uses the platform's, and none is configured (ARCHIVE_S3_ENDPOINT): give one.");
      return { sink: 's3', s3StoreId: null, s3Prefix: null };
    }
    const { endpoint, bucket, region, forcePathStyle, accessKeyId, secretAccessKey, prefix } = body.s3;
    if (accessKeyId === undefined && secretAccessKey !== undefined) throw badRequest('VALIDATION_FAILED', 'secretAccessKey goes with its accessKeyId.');
    const url = normalizedEndpoint(endpoint);
    if (config.production && !url.startsWith('https:'))
      throw badRequest('VALIDATION_FAILED', 'In production a store is reached over https: its keys sign every request and the archives travel there.');
    try {
      await assertOutboundAllowed(url, outboundPolicyOf(config, 's3'));
    } catch (error) {
      // Refused, or a name that does not resolve: either way the policy cannot use it.
      if (error instanceof DeliveryFailure) throw badRequest('OUTBOUND_NOT_ALLOWED', error.message);
      throw error;
    }
    const store = await ensureArchiveStore(trx, secretKeysOf(config), {
      location: { endpoint, bucket, region, pathStyle: forcePathStyle },
      keys: accessKeyId === undefined ? undefined : { accessKeyId, secretAccessKey },
      actor: actorOf(identity),
      keysRequired: true,
    });
    return { sink: 's3', s3StoreId: store.id, s3Prefix: prefix ?? null };
  };
  return { db, temporal, config, isRunning, sinkOf };
}
type ArchivalPlace = ReturnType<typeof archivalPlace>;

/** Which retention applies, archive runs started on demand, and a run's progress. */
function runRoutes({ db, temporal, isRunning }: ArchivalPlace): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/settings/archive-policies/resolve',
      tag: 'settings',
      summary: 'The retention that applies to a log type and site: the site policy, else the global one, else none',
      access: access.rolesOrInternal('ADMIN'),
      query: ResolveQuery,
      responses: { 200: { description: 'resolved', schema: ResolvedSchema } },
      errors: [],
      handler: async (ctx, { query }) => {
        ctx.body = await resolveRetention(db, query.logType, query.siteId);
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/settings/archive-policies/run',
      tag: 'settings',
      summary: 'Start archive runs now (all three log types when none is named)',
      access: access.roles('ADMIN'),
      body: RunBody,
      responses: { 202: { description: 'started', schema: RunsStartedSchema } },
      errors: ['ARCHIVE_RUN_IN_PROGRESS', 'TEMPORAL_UNAVAILABLE'],
      handler: async (ctx, { body }) => {
        const logTypes: LogType[] = body.logType ? [body.logType] : [...LOG_TYPES];
        for (const logType of logTypes) {
          if (await isRunning(logType)) throw conflict(RUN_IN_PROGRESS, `An archive run of ${logType} is already in progress.`);
        }
        const runs: Array<{ logType: LogType } & StartedWorkflow> = [];
        for (const logType of logTypes) {
          const started = await startWorkflow<ArchiveRunWorkflow>(temporal, ARCHIVE_RUN_WORKFLOW, {
            workflowId: archiveRunWorkflowId(logType),
            taskQueue: TaskQueues.archival,
            args: [{ logType, siteId: body.siteId, dryRun: body.dryRun ?? false }],
            priority: fairShareOf('archiveRun', body.siteId),
            typedSearchAttributes: [
              { key: SearchAttributeKeys.LogType, value: logType },
              ...(body.siteId ? [{ key: SearchAttributeKeys.SiteId, value: body.siteId }] : []),
            ],
            alreadyRunningCode: RUN_IN_PROGRESS,
          });
          runs.push({ logType, ...started });
        }
        ctx.status = 202;
        ctx.body = { runs };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/settings/archive-runs/:workflowId',
      tag: 'settings',
      summary: 'Progress of an archive run, from its progress query or its result',
      access: access.roles('ADMIN'),
      params: RunParams,
      responses: { 200: { description: 'the run', schema: ArchiveRunSchema } },
      errors: ['ARCHIVE_RUN_NOT_FOUND', 'TEMPORAL_UNAVAILABLE'],
      handler: async (ctx, { params }) => {
        ctx.body = await archiveRunReport(temporal, params.workflowId);
      },
    }),
  ];
}

/** Archive files loaded back into their log tables, and the reports of those restores. */
function restoreRoutes({ db, temporal }: ArchivalPlace): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/settings/archive-restores',
      tag: 'settings',
      summary:
        'Load one archive file back into its log table, as a workflow: its sha256 is checked against the manifest, rows keep their ids, rows already there are skipped',
      access: access.roles('ADMIN'),
      body: RestoreBody,
      responses: { 202: { description: 'started; its report is at /api/settings/archive-restores/{workflowId}', schema: RestoreStartedSchema } },
      errors: ['NOT_FOUND', 'NOT_AN_ARCHIVE_FILE', 'WORKFLOW_ALREADY_RUNNING', 'TEMPORAL_UNAVAILABLE'],
      handler: async (ctx, { body, identity }) => {
        if (!(await assetExists(db, body.assetId))) throw notFound(`No asset ${body.assetId}.`);
        const file = await archivedFileOfAsset(db, body.assetId);
        if (!file) throw conflict('NOT_AN_ARCHIVE_FILE', `Asset ${body.assetId} was not stored by an archive run: there is nothing to restore it into.`);
        ctx.status = 202;
        ctx.body = await startWorkflow<ArchiveRestoreWorkflow>(temporal, ARCHIVE_RESTORE_WORKFLOW, {
          workflowId: archiveRestoreWorkflowId(body.assetId),
          taskQueue: TaskQueues.archival,
          args: [{ assetId: body.assetId, requestedBy: identity.id }],
          priority: fairShareOf('restore', file.siteId),
          typedSearchAttributes: [
            { key: SearchAttributeKeys.LogType, value: file.logType },
            { key: SearchAttributeKeys.SiteId, value: file.siteId },
          ],
        });
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/settings/archive-restores/:workflowId',
      tag: 'settings',
      summary: 'An archive restore: its file, and how many rows it inserted and skipped',
      access: access.roles('ADMIN'),
      params: RestoreParams,
      responses: { 200: { description: 'the restore', schema: ArchiveRestoreSchema } },
      errors: ['ARCHIVE_RESTORE_NOT_FOUND', 'TEMPORAL_UNAVAILABLE'],
      handler: async (ctx, { params }) => {
        ctx.body = await archiveRestoreReport(temporal, params.workflowId);
      },
    }),
  ];
}

/** Legal holds on archive files: listed, placed, read and released. */
function holdRoutes({ db }: ArchivalPlace): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/settings/archive-holds',
      tag: 'settings',
      summary: "Legal holds on archive files, newest first: on one file, or a site's (its own and its files'), open or released",
      access: access.roles('ADMIN'),
      query: ListHoldsQuery,
      responses: { 200: { description: 'a page of holds', schema: HoldPageSchema } },
      errors: [],
      handler: async (ctx, { query }) => {
        const page = await listArchiveHolds(db, { assetId: query.assetId, siteId: query.siteId, state: query.state, page: query });
        ctx.body = { items: page.items.map(presentHold), nextCursor: page.nextCursor };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/settings/archive-holds',
      tag: 'settings',
      summary:
        'Put an archive file, or every archive file of a site (those to come included), under legal hold: no one deletes a held file, ADMIN included, and each refusal is recorded on the hold',
      access: access.roles('ADMIN'),
      body: CreateHoldBody,
      responses: { 201: { description: 'held', schema: HoldSchema } },
      errors: ['NOT_FOUND', 'NOT_AN_ARCHIVE_FILE'],
      handler: async (ctx, { body, identity }) => {
        const target = 'assetId' in body ? { assetId: body.assetId } : { siteId: body.siteId };
        ctx.status = 201;
        ctx.body = presentHold(await holdArchives(db, { ...target, reason: body.reason, actor: actorOf(identity) }));
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/settings/archive-holds/:id',
      tag: 'settings',
      summary: 'One legal hold, with the deletions it refused',
      access: access.roles('ADMIN'),
      params: HoldIdParams,
      responses: { 200: { description: 'the hold', schema: HoldSchema } },
      errors: ['ARCHIVE_HOLD_NOT_FOUND'],
      handler: async (ctx, { params }) => {
        ctx.body = presentHold(await findArchiveHold(db, params.id));
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/settings/archive-holds/:id',
      tag: 'settings',
      summary: 'Release a legal hold, with a reason; the hold stays on record as released, by whom and when',
      access: access.roles('ADMIN'),
      params: HoldIdParams,
      query: ReleaseHoldQuery,
      responses: { 200: { description: 'released', schema: HoldSchema } },
      errors: ['ARCHIVE_HOLD_NOT_FOUND', 'ARCHIVE_HOLD_RELEASED'],
      handler: async (ctx, { params, query, identity }) => {
        ctx.body = presentHold(await releaseArchiveHold(db, { id: params.id, reason: query.reason, actor: actorOf(identity) }));
      },
    }),
  ];
}

/** The platform's archive sink, and the keys of its S3 store. */
function sinkRoutes({ db, config }: ArchivalPlace): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/settings/archive-sink',
      tag: 'settings',
      summary: "The platform's archive sink (ARCHIVE_SINK), its S3 store if one is configured, and who set the store's keys (never the secret key)",
      access: access.roles('ADMIN'),
      responses: { 200: { description: 'the archive sink', schema: ArchiveSinkSchema } },
      errors: [],
      handler: async (ctx) => {
        const store = config.archive.s3 && (await findArchiveStoreAt(db, config.archive.s3));
        ctx.body = { sink: config.archive.sink, s3: config.archive.s3, credentials: presentStoreKeys(store || undefined) };
      },
    }),
    defineRoute({
      method: 'put',
      path: '/api/settings/archive-sink/credentials',
      tag: 'settings',
      summary: "Set the keys of the platform's S3 store (ARCHIVE_S3_*); the secret key is kept encrypted (SECRETS_KEY) and never answered",
      access: access.roles('ADMIN'),
      body: SinkCredentialsBody,
      responses: { 200: { description: 'set', schema: SinkCredentialsSchema } },
      errors: ['CONFLICT'],
      handler: async (ctx, { body, identity }) => {
        if (!config.archive.s3) throw conflict('CONFLICT', 'The platform has no S3 store: set ARCHIVE_S3_ENDPOINT and ARCHIVE_S3_BUCKET first.');
        const { endpoint, bucket, region, forcePathStyle } = config.archive.s3;
        const store = await ensureArchiveStore(db, secretKeysOf(config), {
          location: { endpoint, bucket, region, pathStyle: forcePathStyle },
          keys: body,
          actor: actorOf(identity),
          keysRequired: true,
          // The platform's store is what its configuration says, whatever a policy recorded before.
          fromConfig: true,
        });
        ctx.body = presentStoreKeys(store);
      },
    }),
  ];
}

/** The retention policies themselves: listed, created, read, changed and deleted. */
function policyRoutes({ db, sinkOf }: ArchivalPlace): AnyRoute[] {
  return [
    ...resourceRoutes({
      path: '/api/settings/archive-policies',
      tag: 'settings',
      noun: { one: 'policy', many: 'policies' },
      access: access.roles('ADMIN'),
      summaries: {
        list: 'Archive retention policies (`siteId=global` for the global ones)',
        create: 'Create a retention policy for a log type and a site (siteId null: the global one)',
        read: 'One retention policy',
        update: 'Change the retention, the enabled flag, the archive format or the sink of a policy',
        remove: 'Delete a policy',
      },
      schemas: {
        listQuery: ListPoliciesQuery,
        page: PolicyPageSchema,
        item: PolicySchema,
        create: CreatePolicyBody,
        update: UpdatePolicyBody,
        idParams: PolicyIdParams,
      },
      errors: { create: ['ARCHIVE_POLICY_EXISTS', 'OUTBOUND_NOT_ALLOWED'], update: ['OUTBOUND_NOT_ALLOWED'] },
      db,
      data: {
        list: (db, query) => listArchivePolicies(db, { logType: query.logType, siteId: query.siteId, page: query }),
        create: (db, body, identity) => savePolicyWithSink(db, { values: body }, (trx) => sinkOf(trx, body, identity)),
        read: findArchivePolicy,
        update: (db, id, body, identity) => savePolicyWithSink(db, { id, values: body }, (trx) => sinkOf(trx, body, identity)),
        remove: deleteArchivePolicy,
      },
      present: presentPolicy,
    }),
  ];
}

/** Settings: archive retention policies, on-demand archive runs and their reports. */
export function archivalRoutes(deps: AppDeps): AnyRoute[] {
  const place = archivalPlace(deps);
  // The router matches in order: `resolve` must come before the policies' `/:id`, which would take it for an id.
  return [...runRoutes(place), ...restoreRoutes(place), ...holdRoutes(place), ...sinkRoutes(place), ...policyRoutes(place)];
}
