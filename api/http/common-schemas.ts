import { Type } from '@sinclair/typebox';

/** A site id, as every module takes it. */
export const SiteId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$' });

/** A revision number: PostgreSQL's integer, so a larger one is a 400, not an overflow in the database. */
export const Revision = Type.Integer({ minimum: 1, maximum: 2147483647 });
