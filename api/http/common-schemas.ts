import { Type } from '@sinclair/typebox';

/** A site id, as every module takes it. */
export const SiteId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]*$' });
