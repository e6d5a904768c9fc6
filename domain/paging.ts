import { Refusal } from './refusal';

/** Where a page ends: the time and id of its last row. A cursor carries it to the next request. */
export interface CursorPosition {
  at: string;
  id: string | number;
}

// PostgreSQL's text form of a timestamptz, which keeps the microseconds a JavaScript Date would drop.
const TIMESTAMP_TEXT = /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d{1,6})?([+-]\d{2}(:?\d{2})?|Z)$/;

export const INVALID_CURSOR: Refusal = { code: 'INVALID_CURSOR', why: 'The cursor is not one this API handed out.' };

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

/** The position a cursor carries, or null when it is not a cursor this API handed out. */
export function cursorPositionOf(cursor: string): CursorPosition | null {
  try {
    const position = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as CursorPosition;
    if (typeof position.at !== 'string' || !TIMESTAMP_TEXT.test(position.at)) return null;
    if (typeof position.id !== 'string' && typeof position.id !== 'number') return null;
    return position;
  } catch {
    return null;
  }
}
