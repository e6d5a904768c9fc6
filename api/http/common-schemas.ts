import { TSchema, Type } from '@sinclair/typebox';

/** A site id, as every module takes it. */
export const SiteId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$' });

/** A revision number: PostgreSQL's integer, so a larger one is a 400, not an overflow in the database. */
export const Revision = Type.Integer({ minimum: 1, maximum: 2147483647 });

/** A value or null. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** An instant as the API writes it (ISO 8601). */
export const Instant = Type.String({ description: 'ISO 8601' });

/** A started workflow run: its id, run id and its page in the Temporal Web UI. */
export const StartedRunFields = { workflowId: Type.String(), runId: Type.String(), uiUrl: Type.String() };

/** A row's two timestamps as its answer carries them (`createdAt`, `updatedAt`, both `Instant`). */
export function timestampsOf(row: { created_at: Date | string; updated_at: Date | string }): { createdAt: string; updatedAt: string } {
  return { createdAt: new Date(row.created_at).toISOString(), updatedAt: new Date(row.updated_at).toISOString() };
}
