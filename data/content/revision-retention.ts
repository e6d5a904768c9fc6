import { Knex } from 'knex';
import { rawRowCount } from '../db';
import { uniqueOr409 } from '../db-errors';
import { Page, PageRequest, paginate } from '../paging';
import { notFound } from '../../lib/errors';
import { componentType, ComponentType } from './component-types';
import type { Actor } from '../../domain/actor';
import { RELEASE_ITEM_TABLE } from './release-tables';

/** Revision retention rules (migration 034): per component type, a site's own or the global one (site_id null). */
export const RETENTION_TABLE = 'settings.revision_retention';

export interface RevisionRetentionRow {
  id: string;
  component_type: string;
  site_id: string | null;
  keep_last: number;
  updated_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface RevisionRetentionValues {
  componentType: string;
  siteId: string | null;
  keepLast: number;
}

const ruleExists = 'A revision retention rule for this component type and site exists already.';

/** How many revisions an item of the type in the site keeps besides the ones always kept; null: all of them. */
export async function keepLastFor(db: Knex, typeName: string, siteId: string): Promise<number | null> {
  const rows = (await db(RETENTION_TABLE)
    .where({ component_type: typeName })
    .andWhere((where) => where.where({ site_id: siteId }).orWhereNull('site_id'))
    .select('site_id', 'keep_last')) as Array<Pick<RevisionRetentionRow, 'site_id' | 'keep_last'>>;
  return (rows.find((row) => row.site_id === siteId) ?? rows.find((row) => row.site_id === null))?.keep_last ?? null;
}

/**
 * Deletes an item's revisions (or, without `id`, every item's of the type in the site) beyond its last
 * `keepLast`, and never one that is kept whatever its age: a revision that was published (any revision's
 * `published_rev`), that an open approval or a scheduled publish names, or that a release names (published
 * or not: a released revision is a record of what went out together). Answers how many went. Runs in
 * the caller's transaction when given one.
 */
export async function pruneRevisions(db: Knex, args: { type: ComponentType; siteId: string; keepLast: number; id?: string }): Promise<number> {
  const audit = `${args.type.table}_aud`;
  const oneItem = args.id === undefined ? '' : 'and id = :id';
  // The approval and scheduling tables by name: data/approvals imports this folder, not the other way round.
  return rawRowCount(
    db,
    `with ranked as (
       select id, rev, row_number() over (partition by id order by rev desc) as recency
         from ${audit} where site_id = :siteId ${oneItem}
     )
     delete from ${audit} a using ranked r
      where a.id = r.id and a.rev = r.rev and r.recency > :keepLast
        and not exists (select 1 from ${audit} p where p.id = a.id and p.published_rev = a.rev)
        and not exists (select 1 from workflow.approval o
                         where o.component_type = :typeName and o.resource_id = a.id::text and o.revision = a.rev and o.status = 'PENDING')
        and not exists (select 1 from workflow.scheduled_change s
                         where s.component_type = :typeName and s.resource_id = a.id::text and s.revision = a.rev and s.status = 'SCHEDULED')
        and not exists (select 1 from ${RELEASE_ITEM_TABLE} i
                         where i.component_type = :typeName and i.component_id = a.id and i.revision = a.rev)`,
    { siteId: args.siteId, keepLast: args.keepLast, typeName: args.type.type, ...(args.id === undefined ? {} : { id: args.id }) },
  );
}

/** After a revision is written: the item's revisions pruned to its rule, if it has one. */
export async function pruneAfterWrite(trx: Knex.Transaction, args: { type: ComponentType; siteId: string; id: string }): Promise<void> {
  const keepLast = await keepLastFor(trx, args.type.type, args.siteId);
  if (keepLast !== null) await pruneRevisions(trx, { ...args, keepLast });
}

export async function listRetentionRules(db: Knex, page: PageRequest): Promise<Page<RevisionRetentionRow>> {
  return paginate<RevisionRetentionRow>({ query: db(RETENTION_TABLE).select('*'), ...page, timeColumn: 'created_at', idColumn: 'id' });
}

export async function findRetentionRule(db: Knex, id: string): Promise<RevisionRetentionRow> {
  const row = (await db(RETENTION_TABLE).where({ id }).first()) as RevisionRetentionRow | undefined;
  if (!row) throw notFound(`No revision retention rule ${id}.`);
  return row;
}

/**
 * Saves a rule (a new one, or `id`'s) and prunes what it now covers, in one transaction: the site's items,
 * or, for a global rule, the items of every site without a rule of its own.
 */
export async function saveRetentionRule(
  db: Knex,
  args: { id?: string; values: RevisionRetentionValues; type: ComponentType; actor: Actor },
): Promise<RevisionRetentionRow> {
  return db.transaction(async (trx) => {
    const columns = {
      component_type: args.values.componentType,
      site_id: args.values.siteId,
      keep_last: args.values.keepLast,
      updated_by: args.actor.id,
    };
    const [row] = (await uniqueOr409(
      () =>
        args.id === undefined
          ? trx(RETENTION_TABLE).insert(columns).returning('*')
          : trx(RETENTION_TABLE)
              .where({ id: args.id })
              .update({ ...columns, updated_at: trx.fn.now() })
              .returning('*'),
      'CONFLICT',
      ruleExists,
    )) as RevisionRetentionRow[];
    if (!row) throw notFound(`No revision retention rule ${args.id}.`);
    await pruneByRule(trx, row, args.type);
    return row;
  });
}

/**
 * Prunes what one rule covers: its site's items, or, for a global rule, the items of every site without a
 * rule of its own. Answers how many revisions went.
 */
async function pruneByRule(db: Knex, rule: RevisionRetentionRow, type: ComponentType): Promise<number> {
  const sites =
    rule.site_id !== null
      ? [rule.site_id]
      : ((await db(`${type.table}_aud`)
          .distinct('site_id')
          .whereNotIn('site_id', db(RETENTION_TABLE).where({ component_type: rule.component_type }).whereNotNull('site_id').select('site_id'))
          .pluck('site_id')) as string[]);
  let pruned = 0;
  for (const siteId of sites) pruned += await pruneRevisions(db, { type, siteId, keepLast: rule.keep_last });
  return pruned;
}

/**
 * The daily job's work: every rule prunes what it covers, each in its own transaction. Writes prune what
 * they can as they go; this takes what became prunable without a write (a release that let a revision go,
 * a cancelled schedule, an approval decided). Answers the rules run and the revisions that went.
 */
export async function pruneEveryRule(db: Knex): Promise<{ rules: number; pruned: number }> {
  const rules = (await db(RETENTION_TABLE).select('*').orderBy('created_at')) as RevisionRetentionRow[];
  let pruned = 0;
  for (const rule of rules) {
    const type = componentType(rule.component_type);
    if (type) pruned += await db.transaction((trx) => pruneByRule(trx, rule, type));
  }
  return { rules: rules.length, pruned };
}

export async function deleteRetentionRule(db: Knex, id: string): Promise<void> {
  await findRetentionRule(db, id);
  await db(RETENTION_TABLE).where({ id }).delete();
}
