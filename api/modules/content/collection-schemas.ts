import { TObject, TSchema, Type } from '@sinclair/typebox';
import { pageQueryFields } from '../../http/pagination';
import { ComponentType } from '../../../data/content/component-types';
import { Instant, Nullable, Revision, SiteId, StartedRunFields } from '../../http/common-schemas';
import { pageSchema } from '../../http/pagination';

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Comment = Type.String({ maxLength: 2000 });
export const Status = Type.Union(['DRAFT', 'PENDING_APPROVAL', 'PUBLISHED', 'REJECTED', 'ARCHIVED'].map((status) => Type.Literal(status)));

export const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
export const RevisionParams = Type.Object({ id: Type.String({ format: 'uuid' }), rev: Revision });

/** Every writable field; those with a default may be left out (a create takes the default, an edit keeps the value). */
function writableFields(type: ComponentType): Record<string, TSchema> {
  const properties: Record<string, TSchema> = {};
  for (const field of type.fields.filter((candidate) => candidate.writable)) {
    properties[field.name] = field.default !== undefined ? Type.Optional(field.schema) : field.schema;
  }
  return properties;
}

/** `POST {collection}`: the site, the name and every writable field (those with a default may be left out). */
export function createBody(type: ComponentType): TObject {
  return Type.Object({ siteId: SiteId, name: Name, ...writableFields(type) }, { additionalProperties: false });
}

/**
 * `PUT {collection}/{id}`: the whole draft again (a field with a default left out keeps its value) and the
 * editor's comment on the change, kept with the revision; the site does not change.
 */
export function editBody(type: ComponentType): TObject {
  return Type.Object({ name: Name, ...writableFields(type), comment: Type.Optional(Comment) }, { additionalProperties: false });
}

export const ListQuery = Type.Object({ ...pageQueryFields, siteId: SiteId, status: Type.Optional(Status) });

/** When a scheduled publish or archive happens: an ISO timestamp with its offset, in the future, within a year. */
const DueAt = Type.String({ format: 'date-time', maxLength: 40 });

export const PublishBody = Type.Object(
  { comment: Type.Optional(Type.String({ maxLength: 2000 })), publishAt: Type.Optional(DueAt) },
  { additionalProperties: false },
);

export const ArchiveBody = Type.Object({ archiveAt: Type.Optional(DueAt) }, { additionalProperties: false });

export const CallbackBody = Type.Object(
  {
    decision: Type.Union([Type.Literal('APPROVED'), Type.Literal('REJECTED')]),
    revision: Revision,
    correlationId: Type.String({ format: 'uuid' }),
  },
  { additionalProperties: false },
);

export const PageQuery = Type.Object({ ...pageQueryFields });

export const CompareQuery = Type.Object({
  from: Revision,
  to: Type.Optional(Type.String({ pattern: '^([1-9][0-9]{0,9}|draft|published)$', description: 'a revision, `draft` (the default) or `published`' })),
});

export const ComparisonSchema = Type.Object({
  from: Type.Integer(),
  to: Type.Union([Type.Integer(), Type.Literal('draft'), Type.Literal('published')]),
  /** Each changed field as a JSON pointer; `before` or `after` is absent where the field is missing on that side. */
  changes: Type.Array(Type.Object({ path: Type.String(), before: Type.Optional(Type.Unknown()), after: Type.Optional(Type.Unknown()) })),
});

export const HistorySchema = Type.Object({
  nextCursor: Nullable(Type.String()),
  items: Type.Array(
    Type.Object({
      rev: Type.Integer(),
      revType: Type.Integer({ description: '0 created, 1 changed, 2 deleted' }),
      userId: Type.Union([Type.String(), Type.Null()]),
      userName: Type.Union([Type.String(), Type.Null()]),
      at: Type.String(),
      status: Type.String(),
      comment: Nullable(Type.String()),
    }),
  ),
});

/** The entity's own fields as stored: each field's stored schema (else its schema), or null where it was never set. */
function storedFields(type: ComponentType): Record<string, TSchema> {
  return Object.fromEntries(type.fields.map((field) => [field.name, Nullable(field.stored ?? field.schema)]));
}

/** One entity as the collection answers it: its fields and its lifecycle. */
export function entitySchema(type: ComponentType): TObject {
  return Type.Object({
    id: Type.String({ format: 'uuid' }),
    siteId: Type.String(),
    name: Type.String(),
    ...storedFields(type),
    status: Status,
    publishedRev: Nullable(Type.Integer()),
    publishedAt: Nullable(Instant),
    ...(type.content ? { publishedSnapshot: Nullable(Type.Record(Type.String(), Type.Unknown())) } : {}),
    createdBy: Nullable(Type.String()),
    updatedBy: Nullable(Type.String()),
    createdAt: Instant,
    updatedAt: Instant,
  });
}

export const entityPageSchema = (type: ComponentType) => pageSchema(entitySchema(type));

/** The entity as it was at one revision. */
export const revisionSchema = (type: ComponentType) => Type.Object({ ...entitySchema(type).properties, rev: Type.Integer() });

/** What visitors get: the snapshot frozen at publishing, with its revision and time. */
export const publishedSchema = (type: ComponentType) =>
  Type.Object({
    id: Type.String(),
    siteId: Type.String(),
    name: Type.String(),
    ...storedFields(type),
    publishedRev: Type.Integer(),
    publishedAt: Instant,
    /** Present on a read for one language. */
    locale: Type.Optional(Type.Union([Type.Literal('en'), Type.Literal('ar')])),
    /** The JSON pointers of the texts that came from the other language, e.g. `/data/heading/ar`. */
    fallbacks: Type.Optional(Type.Array(Type.String())),
  });

export const PublishedAnswer = Type.Object({ status: Type.Literal('PUBLISHED'), publishedRev: Type.Integer(), ...StartedRunFields });
export const PendingApprovalAnswer = Type.Object({
  status: Type.Literal('PENDING_APPROVAL'),
  correlationId: Type.String(),
  /** Set for a scheduled publish: approved before then, it publishes at this time. */
  publishAt: Type.Optional(Instant),
  ...StartedRunFields,
});

/** A publish or archive waiting for its time (or, for a cancel, no longer). */
export const ScheduledAnswer = Type.Object({
  status: Type.Union([Type.Literal('SCHEDULED'), Type.Literal('CANCELLED')]),
  action: Type.Union([Type.Literal('PUBLISH'), Type.Literal('ARCHIVE')]),
  dueAt: Instant,
  /** The revision a scheduled publish publishes. */
  revision: Type.Optional(Type.Integer()),
  ...StartedRunFields,
});
