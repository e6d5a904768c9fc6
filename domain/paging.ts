import { Refusal } from './refusal';

/** Where a page ends: the time and id of its last row. A cursor carries it to the next request. */
export interface CursorPosition {
  at: string;
  id: string | number;
}

// PostgreSQL's text form of a timestamptz, which keeps the microseconds a JavaScript Date would drop.
const TIMESTAMP_TEXT = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:?\d{2})?|Z)$/;

export const INVALID_CURSOR: Refusal = { code: 'INVALID_CURSOR', why: 'The cursor is not one this API handed out.' };

/** Whether a cursor's content is a position this API hands out: a timestamp's text and a row id. */
export function isCursorPosition(value: unknown): value is CursorPosition {
  if (typeof value !== 'object' || value === null) return false;
  const { at, id } = value as Record<string, unknown>;
  return typeof at === 'string' && TIMESTAMP_TEXT.test(at) && (typeof id === 'string' || typeof id === 'number');
}
