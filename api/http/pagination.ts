import { TSchema, Type } from '@sinclair/typebox';
import { Page } from '../../data/paging';

/** `?limit=` (1 to 500, default 50) and `?cursor=`; spread into a route's query schema. */
export const pageQueryFields = {
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
  cursor: Type.Optional(Type.String({ maxLength: 512 })),
};

export type { Page };

/** A page as the API answers it: each row presented, the cursor kept. */
export function presentPage<Row, Item>(page: Page<Row>, present: (row: Row) => Item): Page<Item> {
  return { items: page.items.map((row) => present(row)), nextCursor: page.nextCursor };
}

/** The schema of a page of `item`s. */
export const pageSchema = <T extends TSchema>(item: T) => Type.Object({ items: Type.Array(item), nextCursor: Type.Union([Type.String(), Type.Null()]) });
