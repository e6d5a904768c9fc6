import { Type } from '@sinclair/typebox';
import { Instant, Nullable, StartedRunFields } from '../../http/common-schemas';

// The schemas of the release routes.

export const ReleaseParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
export const ItemParams = Type.Object({ id: Type.String({ format: 'uuid' }), itemId: Type.String({ format: 'uuid' }) });
const ReleaseStatus = Type.Union(['OPEN', 'SCHEDULED', 'PENDING_APPROVAL', 'PUBLISHED', 'FAILED', 'REJECTED'].map((status) => Type.Literal(status)));

const Failure = Type.Object({
  itemId: Nullable(Type.String()),
  componentType: Nullable(Type.String()),
  componentId: Nullable(Type.String()),
  reason: Type.String(),
  message: Type.String(),
});
const Item = Type.Object({
  id: Type.String(),
  type: Type.String(),
  componentId: Type.String(),
  revision: Type.Integer(),
  /** The component's name and status now; null once it is deleted. */
  name: Nullable(Type.String()),
  componentStatus: Nullable(Type.String()),
  addedBy: Nullable(Type.String()),
  addedAt: Instant,
});
const releaseFields = {
  id: Type.String(),
  siteId: Type.String(),
  name: Type.String(),
  /** SCHEDULED: OPEN with a publish waiting for its time (`publishAt`). */
  status: ReleaseStatus,
  /** Moves on with every change to the items: an approval or a schedule is of one version. */
  version: Type.Integer(),
  publishAt: Nullable(Instant),
  /** What stopped the last publish: every item that failed, and why. Nothing of the release was published. */
  failure: Nullable(Type.Array(Failure)),
  itemCount: Type.Integer(),
  createdBy: Nullable(Type.String()),
  createdAt: Instant,
  updatedAt: Instant,
  publishedAt: Nullable(Instant),
  publishedBy: Nullable(Type.String()),
};
export const ReleaseSummary = Type.Object(releaseFields);
export const ReleaseSchema = Type.Object({ ...releaseFields, items: Type.Array(Item) });

export const PublishReleaseBody = Type.Object({ comment: Type.Optional(Type.String({ maxLength: 2000 })) }, { additionalProperties: false });
export const PublishedReleaseAnswer = Type.Object({ status: Type.Literal('PUBLISHED'), version: Type.Integer(), ...StartedRunFields });
