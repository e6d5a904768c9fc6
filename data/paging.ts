import { Knex } from 'knex';
import { refusedWith } from '../lib/errors';
import { CursorPosition, INVALID_CURSOR, isCursorPosition } from '../domain/paging';

/** One page of a list, newest first, and the cursor of the next one (null on the last page). */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** What a list asks for: `limit` rows after `cursor`. */
export interface PageRequest {
  limit: number;
  cursor?: string;
}

export function encodeCursor(position: CursorPosition): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

/** The position a cursor carries, or null when it is not a cursor this API handed out. */
export function cursorPositionOf(cursor: string): CursorPosition | null {
  try {
    const position: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    return isCursorPosition(position) ? position : null;
  } catch {
    return null;
  }
}

/**
 * Keyset pagination, newest first (or, for what is due, soonest first), over `(timeColumn, idColumn)`:
 * stable while rows are added, with no OFFSET scans. Reads one row more than asked to know whether there
 * is a next page. The query must name its columns (`select(...)`), since the cursor's column is added
 * beside them.
 */
export async function paginate<Row extends object>(args: {
  query: Knex.QueryBuilder;
  limit: number;
  cursor?: string;
  timeColumn: string;
  idColumn: string;
  order?: 'newest-first' | 'soonest-first';
  /**
   * The id alone orders the rows, as it grows with their time (a revision number): the rows come from one
   * index range with no sort, where ordering by a time held in a joined table sorts all of them first.
   */
  idOrders?: boolean;
  /**
   * With `idOrders`: a column of a joined table equal to the id (the revision's number in revinfo). The
   * cursor bounds it too, so that PostgreSQL starts both sides of a merge join at the cursor instead of
   * reading the joined table down from its newest row.
   */
  idAlsoIn?: string;
}): Promise<Page<Row>> {
  const { query, limit, timeColumn, idColumn } = args;
  const direction = args.order === 'soonest-first' ? 'asc' : 'desc';
  const after = direction === 'asc' ? '>' : '<';
  if (args.cursor) {
    const position = cursorPositionOf(args.cursor);
    // A revision number is an integer: anything else would reach PostgreSQL as a cast it cannot make.
    if (!position || (args.idOrders && !/^\d{1,15}$/.test(String(position.id)))) throw refusedWith(INVALID_CURSOR);
    if (args.idOrders) for (const column of [idColumn, ...(args.idAlsoIn ? [args.idAlsoIn] : [])]) query.where(column, after, position.id);
    else query.whereRaw(`(??, ??) ${after} (?::timestamptz, ?)`, [timeColumn, idColumn, position.at, position.id]);
  }
  const ordering = [...(args.idOrders ? [] : [{ column: timeColumn, order: direction }]), { column: idColumn, order: direction }];
  const rows = (await query
    .select(query.client.raw('??::text as "cursorAt"', [timeColumn]))
    .orderBy(ordering)
    .limit(limit + 1)) as (Row & { cursorAt: string })[];
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const idKey = idColumn.split('.').pop() as string;
  const nextCursor = rows.length > limit && last ? encodeCursor({ at: last.cursorAt, id: (last as Record<string, unknown>)[idKey] as string | number }) : null;
  const items = page.map(({ cursorAt: _cursorAt, ...row }) => row as unknown as Row);
  return { items, nextCursor };
}
