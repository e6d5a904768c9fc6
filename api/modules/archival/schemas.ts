import { Type } from '@sinclair/typebox';
import { pageQueryFields, pageSchema } from '../../http/pagination';
import { LOG_TYPES } from '../../../domain/archival';
import { Instant, Nullable, SiteId } from '../../http/common-schemas';

export const LogTypeSchema = Type.Union(LOG_TYPES.map((t) => Type.Literal(t)));
const RetentionDays = Type.Integer({ minimum: 1, maximum: 3650 });

export const PolicyIdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

/** The format of the policy's archive files; null: the platform's (ARCHIVE_FORMAT, csv unless set). */
const PolicyFormat = Type.Union([Type.Literal('csv'), Type.Literal('parquet'), Type.Null()]);

/** Where the policy's archive files go; null: the platform's sink (ARCHIVE_SINK, file unless set). */
const PolicySink = Type.Union([Type.Literal('file'), Type.Literal('s3'), Type.Null()]);
const Printable = (maxLength: number) => Type.String({ minLength: 1, maxLength, pattern: '^[\\x21-\\x7e]+$' });
const S3Prefix = Type.String({ maxLength: 512, pattern: "^$|^(?!(.*/)?\\.{1,2}/)[A-Za-z0-9!_.*'()-]+(/[A-Za-z0-9!_.*'()-]+)*/$" });

/**
 * The store of an `s3` policy. Left out (or null): the platform's (ARCHIVE_S3_*). The keys are needed the first
 * time a store is named; the secret is written, never answered, and kept with the same key id when left out.
 */
const PolicyS3Body = Type.Object(
  {
    endpoint: Type.String({ maxLength: 2048, pattern: '^https?://[^\\s]+$' }),
    bucket: Type.String({ pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$' }),
    prefix: Type.Optional(S3Prefix),
    region: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9-]+$' })),
    forcePathStyle: Type.Optional(Type.Boolean()),
    accessKeyId: Type.Optional(Printable(256)),
    secretAccessKey: Type.Optional(Printable(1024)),
  },
  { additionalProperties: false },
);

const sinkFields = { sink: Type.Optional(PolicySink), s3: Type.Optional(Type.Union([PolicyS3Body, Type.Null()])) };

export const CreatePolicyBody = Type.Object(
  {
    logType: LogTypeSchema,
    siteId: Type.Union([SiteId, Type.Null()]),
    retentionDays: RetentionDays,
    enabled: Type.Boolean(),
    format: Type.Optional(PolicyFormat),
    ...sinkFields,
  },
  { additionalProperties: false },
);

/** A `format` or `sink` left out stays as it is. */
export const UpdatePolicyBody = Type.Object(
  { retentionDays: RetentionDays, enabled: Type.Boolean(), format: Type.Optional(PolicyFormat), ...sinkFields },
  { additionalProperties: false },
);

export const ListPoliciesQuery = Type.Object({
  ...pageQueryFields,
  logType: Type.Optional(LogTypeSchema),
  /** `global` for the global policies. */
  siteId: Type.Optional(SiteId),
});

export const ResolveQuery = Type.Object({ logType: LogTypeSchema, siteId: SiteId });

export const PolicySchema = Type.Object({
  id: Type.String(),
  logType: LogTypeSchema,
  siteId: Type.Union([Type.String(), Type.Null()]),
  retentionDays: Type.Integer(),
  enabled: Type.Boolean(),
  format: PolicyFormat,
  sink: PolicySink,
  /** The policy's own store, when it names one (the secret key never shown). */
  s3: Nullable(
    Type.Object({
      endpoint: Type.String(),
      bucket: Type.String(),
      prefix: Nullable(Type.String()),
      region: Type.String(),
      forcePathStyle: Type.Boolean(),
      accessKeyId: Nullable(Type.String()),
      secretAccessKeySet: Type.Boolean(),
    }),
  ),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

export const ResolvedSchema = Type.Object({
  enabled: Type.Boolean(),
  retentionDays: Type.Union([Type.Integer(), Type.Null()]),
  source: Type.Union([Type.Literal('SITE'), Type.Literal('GLOBAL'), Type.Literal('NONE')]),
});

export const RunBody = Type.Object(
  { logType: Type.Optional(LogTypeSchema), siteId: Type.Optional(SiteId), dryRun: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

export const RunsStartedSchema = Type.Object({
  runs: Type.Array(Type.Object({ logType: LogTypeSchema, workflowId: Type.String(), runId: Type.String(), uiUrl: Type.String() })),
});

export const RunParams = Type.Object({ workflowId: Type.String({ pattern: '^archive:(SCHEDULER_JOB_LOG|EMAIL_LOG|INTEGRATION_LOG)$' }) });

const SITE_STATES = ['PENDING', 'SKIPPED', 'EXPORTING', 'UPLOADING', 'DELETING', 'DONE', 'DRY_RUN', 'FAILED'] as const;
const MONTH_STATES = ['EXPORTING', 'UPLOADING', 'DETACHING', 'DROPPING', 'DROPPED', 'FAILED'] as const;

/** An archive run's report: the months it dropped whole, and per site what was exported, uploaded (its assets) and deleted. */
export const ArchiveRunSchema = Type.Object({
  workflowId: Type.String(),
  logType: LogTypeSchema,
  dryRun: Type.Boolean(),
  status: Type.Union([Type.Literal('RUNNING'), Type.Literal('COMPLETED'), Type.Literal('FAILED')]),
  startedAt: Instant,
  closedAt: Nullable(Instant),
  resumedParts: Type.Integer(),
  partitions: Type.Optional(
    Type.Array(
      Type.Object({
        name: Type.String(),
        state: Type.Union(MONTH_STATES.map((state) => Type.Literal(state))),
        rowsExported: Type.Integer(),
        rowsDropped: Type.Integer(),
        rowsReturned: Type.Integer(),
        assetIds: Type.Array(Type.String()),
        error: Nullable(Type.String()),
      }),
    ),
  ),
  sites: Type.Array(
    Type.Object({
      siteId: Type.String(),
      cutoff: Nullable(Instant),
      rowsExported: Type.Integer(),
      rowsDeleted: Type.Integer(),
      assetId: Nullable(Type.String()),
      assetIds: Type.Array(Type.String()),
      state: Type.Union(SITE_STATES.map((state) => Type.Literal(state))),
      error: Nullable(Type.String()),
    }),
  ),
});

export const PolicyPageSchema = pageSchema(PolicySchema);

export const RestoreBody = Type.Object({ assetId: Type.String({ format: 'uuid' }) }, { additionalProperties: false });

export const RestoreStartedSchema = Type.Object({ workflowId: Type.String(), runId: Type.String(), uiUrl: Type.String() });

export const RestoreParams = Type.Object({ workflowId: Type.String({ pattern: '^archive-restore:[0-9a-fA-F-]{36}$' }) });

/** An archive restore's report: the file, and how many of its rows went back in and how many were there. */
export const ArchiveRestoreSchema = Type.Object({
  workflowId: Type.String(),
  assetId: Type.String(),
  status: Type.Union([Type.Literal('RUNNING'), Type.Literal('COMPLETED'), Type.Literal('FAILED')]),
  logType: Nullable(LogTypeSchema),
  siteId: Nullable(Type.String()),
  fileName: Nullable(Type.String()),
  rowsInFile: Type.Integer(),
  rowsInserted: Type.Integer(),
  rowsSkipped: Type.Integer(),
  error: Nullable(Type.String()),
  startedAt: Instant,
  closedAt: Nullable(Instant),
});

const HoldReason = Type.String({ minLength: 1, maxLength: 1000, description: 'why the hold is set or released; kept on the hold for good' });

/** A hold on one archive file (`assetId`) or on every archive file of a site (`siteId`): one of the two. */
export const CreateHoldBody = Type.Union(
  [
    Type.Object({ assetId: Type.String({ format: 'uuid' }), reason: HoldReason }, { additionalProperties: false }),
    Type.Object({ siteId: SiteId, reason: HoldReason }, { additionalProperties: false }),
  ],
  { description: 'assetId or siteId, and a reason' },
);

export const HoldIdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });

export const ReleaseHoldQuery = Type.Object({ reason: HoldReason });

export const ListHoldsQuery = Type.Object({
  ...pageQueryFields,
  assetId: Type.Optional(Type.String({ format: 'uuid' })),
  /** The site's own holds and those on its files. */
  siteId: Type.Optional(SiteId),
  state: Type.Optional(Type.Union([Type.Literal('OPEN'), Type.Literal('RELEASED')])),
});

const ActorSchema = Type.Object({ id: Type.String(), name: Nullable(Type.String()) });

export const HoldSchema = Type.Object({
  id: Type.String(),
  assetId: Nullable(Type.String()),
  siteId: Nullable(Type.String()),
  reason: Type.String(),
  heldBy: ActorSchema,
  heldAt: Instant,
  released: Nullable(Type.Object({ by: ActorSchema, at: Instant, reason: Type.String() })),
  /** The deletions this hold refused, newest first (at most 20). */
  refusals: Type.Array(Type.Object({ assetId: Type.String(), fileName: Type.String(), by: ActorSchema, at: Instant })),
});

export const HoldPageSchema = pageSchema(HoldSchema);

/** The archive store's keys: the secret is written, never read back. */
export const SinkCredentialsBody = Type.Object(
  {
    accessKeyId: Printable(256),
    /** Left out: the stored secret stays (only with the same accessKeyId). */
    secretAccessKey: Type.Optional(Printable(1024)),
  },
  { additionalProperties: false },
);

export const SinkCredentialsSchema = Type.Object({
  accessKeyId: Type.String(),
  /** Always true: a secret key is stored, and it is never answered. */
  secretAccessKeySet: Type.Literal(true),
  updatedBy: Nullable(Type.String()),
  updatedByName: Nullable(Type.String()),
  updatedAt: Instant,
});

export const ArchiveSinkSchema = Type.Object({
  /** Where new archive files go (ARCHIVE_SINK). */
  sink: Type.Union([Type.Literal('file'), Type.Literal('s3')]),
  /** The S3 store (ARCHIVE_S3_*), when one is configured. */
  s3: Nullable(Type.Object({ endpoint: Type.String(), bucket: Type.String(), prefix: Type.String(), region: Type.String(), forcePathStyle: Type.Boolean() })),
  credentials: Nullable(SinkCredentialsSchema),
});
