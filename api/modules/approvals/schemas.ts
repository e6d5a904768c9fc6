import { Type } from '@sinclair/typebox';
import { CALLBACK_PATH_PATTERN, COMPONENT_TYPE_NAMES } from '../../../domain/approvals';
import { Instant, Nullable, Revision, SiteId, StartedRunFields } from '../../http/common-schemas';

export const ComponentTypeName = Type.Union(COMPONENT_TYPE_NAMES.map((name) => Type.Literal(name)));
const Uuid = Type.String({ format: 'uuid' });

export const PolicyBody = Type.Object(
  {
    componentType: ComponentTypeName,
    siteId: Type.Union([SiteId, Type.Null()], { description: 'null: the global policy' }),
    workflowDefinitionId: Type.Optional(Type.Union([Uuid, Type.Null()], { description: 'null: one MANAGER stage' })),
    enabled: Type.Boolean(),
  },
  { additionalProperties: false },
);

export const PolicyIdParams = Type.Object({ id: Uuid });
export const CorrelationParams = Type.Object({ correlationId: Uuid });

export const SubmitBody = Type.Object(
  {
    componentType: ComponentTypeName,
    siteId: SiteId,
    // Every versioned type's id is a uuid: the approval locks the resource's row by it.
    resourceId: Uuid,
    revision: Revision,
    callbackPath: Type.String({ maxLength: 1000, pattern: CALLBACK_PATH_PATTERN }),
    requestedBy: Type.String({ minLength: 1, maxLength: 200 }),
    title: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

export const QueueQuery = Type.Object({ status: Type.Optional(Type.Union([Type.Literal('PENDING'), Type.Literal('APPROVED'), Type.Literal('REJECTED')])) });

export const DecideBody = Type.Object(
  { decision: Type.Union([Type.Literal('APPROVED'), Type.Literal('REJECTED')]), comment: Type.Optional(Type.String({ maxLength: 2000 })) },
  { additionalProperties: false },
);

export const PolicySchema = Type.Object({
  id: Uuid,
  componentType: Type.String(),
  siteId: Nullable(Type.String()),
  workflowDefinitionId: Nullable(Type.String()),
  enabled: Type.Boolean(),
  createdAt: Instant,
  updatedAt: Instant,
});

const DecisionSchema = Type.Object({
  stage: Type.Integer(),
  stageName: Type.String(),
  decision: Type.Union([Type.Literal('APPROVED'), Type.Literal('REJECTED')]),
  decidedBy: Type.String(),
  decidedByName: Nullable(Type.String()),
  comment: Nullable(Type.String()),
  at: Instant,
  proposalId: Type.Optional(Type.String()),
});

export const ApprovalSchema = Type.Object({
  correlationId: Uuid,
  componentType: Type.String(),
  siteId: Type.String(),
  resourceId: Type.String(),
  revision: Type.Integer(),
  callbackPath: Type.String(),
  requestedBy: Type.String(),
  title: Nullable(Type.String()),
  comment: Nullable(Type.String()),
  status: Type.Union([Type.Literal('PENDING'), Type.Literal('APPROVED'), Type.Literal('REJECTED')]),
  stages: Type.Array(Type.Object({ name: Type.String(), role: Type.String() })),
  currentStage: Type.Integer(),
  decisions: Type.Array(DecisionSchema),
  workflowId: Type.String(),
  createdAt: Instant,
  decidedAt: Nullable(Instant),
});

/** A queue item: the approval, with what approving it would change (against what is published now). */
export const QueueItemSchema = Type.Object({
  ...ApprovalSchema.properties,
  comparison: Nullable(
    Type.Object({
      against: Type.Union([Type.Literal('published'), Type.Literal('nothing')]),
      changes: Type.Array(Type.Object({ path: Type.String(), before: Type.Optional(Type.Unknown()), after: Type.Optional(Type.Unknown()) })),
    }),
  ),
});

/** One approval, with the publish run's progress while it still answers (null once it has closed). */
export const ApprovalWithProgressSchema = Type.Object({ ...ApprovalSchema.properties, progress: Nullable(Type.Record(Type.String(), Type.Unknown())) });

/** The approval after a decision, with the publish run that took it. */
export const DecidedSchema = Type.Object({ ...ApprovalSchema.properties, ...StartedRunFields });

export const SubmittedSchema = Type.Object({ required: Type.Boolean(), correlationId: Type.Optional(Type.String()) });

/** A publish or archive waiting for its time. */
export const ScheduledChangeSchema = Type.Object({
  componentType: Type.String(),
  /** The item's collection (its schedule is cancelled at `{collection}/{id}/schedule`); null for a type no longer registered. */
  collection: Nullable(Type.String()),
  id: Type.String(),
  siteId: Type.String(),
  action: Type.Union([Type.Literal('PUBLISH'), Type.Literal('ARCHIVE')]),
  /** The revision a publish publishes; null for an archive. */
  revision: Nullable(Type.Integer()),
  dueAt: Instant,
  requestedBy: Type.String(),
  workflowId: Type.String(),
  runId: Type.String(),
  uiUrl: Type.String(),
  /** Whether the caller may cancel it: the type's author role (ADMIN alone for approval chains). */
  canCancel: Type.Boolean(),
});
