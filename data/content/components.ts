import { Knex } from 'knex';
import { Page, PageRequest, paginate } from '../paging';
import { notFound } from '../../lib/errors';
import { FieldChange, jsonDiff } from '../../lib/json-diff';
import { ComponentStatus } from '../../domain/approvals';
import { columnOf, ComponentType } from './component-types';
import { latestRevision, revisionsOf, rowAtRevision, writeRevision } from './revisions';
import type { Actor } from '../../domain/actor';

export type ComponentRow = Record<string, unknown> & { id: string; site_id: string; status: ComponentStatus; published_rev: number | null };

/** The values of a create or an edit: name and the type's writable fields, by JSON name. */
export interface ComponentValues {
  name: string;
  fields: Record<string, unknown>;
}

const iso = (value: unknown) => (value instanceof Date ? value.toISOString() : (value ?? null));

function columnsFor(type: ComponentType, values: ComponentValues): Record<string, unknown> {
  const columns: Record<string, unknown> = { name: values.name };
  for (const field of type.fields.filter((candidate) => candidate.writable)) {
    if (!(field.name in values.fields)) continue;
    const value = values.fields[field.name];
    columns[columnOf(field.name)] = field.json ? JSON.stringify(value) : value;
  }
  return columns;
}

/** The entity as the API answers it: own fields by their JSON names, then the lifecycle. */
export function presentComponent(type: ComponentType, row: Record<string, unknown>): Record<string, unknown> {
  const entity: Record<string, unknown> = {
    ...snapshotOf(type, row),
    status: row.status,
    publishedRev: row.published_rev ?? null,
    publishedAt: iso(row.published_at),
  };
  if (type.content) entity.publishedSnapshot = row.published_snapshot ?? null;
  return { ...entity, createdBy: row.created_by ?? null, updatedBy: row.updated_by ?? null, createdAt: iso(row.created_at), updatedAt: iso(row.updated_at) };
}

/** The entity's own state, without its lifecycle: what a revision is, and what publishing freezes. */
export function snapshotOf(type: ComponentType, row: Record<string, unknown>): Record<string, unknown> {
  const snapshot: Record<string, unknown> = { id: row.id, siteId: row.site_id, name: row.name };
  for (const field of type.fields) {
    const value = row[columnOf(field.name)];
    snapshot[field.name] = typeof value === 'string' && field.schema.type === 'integer' ? Number(value) : value;
  }
  return snapshot;
}

export async function findComponent(db: Knex, type: ComponentType, id: string): Promise<ComponentRow | undefined> {
  return db<ComponentRow>(type.table).where({ id }).first();
}

async function lockRow(trx: Knex.Transaction, type: ComponentType, id: string): Promise<ComponentRow | undefined> {
  return trx<ComponentRow>(type.table).where({ id }).forUpdate().first();
}

export interface Written {
  row: ComponentRow;
  rev: number;
}

/**
 * Inserts a new entity as a DRAFT and writes its first revision. `publish` publishes that first revision in
 * the same transaction (archive files are published on arrival). `readOnlyColumns` carry the values of the
 * type's read-only fields (an asset's file).
 */
export async function createComponent(
  db: Knex,
  args: { type: ComponentType; siteId: string; values: ComponentValues; actor: Actor; readOnlyColumns?: Record<string, unknown>; publish?: boolean },
): Promise<Written> {
  return db.transaction(async (trx) => {
    const [inserted] = (await trx(args.type.table)
      .insert({ site_id: args.siteId, ...columnsFor(args.type, args.values), ...args.readOnlyColumns, created_by: args.actor.id, updated_by: args.actor.id })
      .returning('*')) as ComponentRow[];
    const rev = await writeRevision(trx, { type: args.type, id: inserted.id, siteId: inserted.site_id, revType: 0, actor: args.actor });
    if (!args.publish) return { row: inserted, rev };
    const [row] = (await trx(args.type.table)
      .where({ id: inserted.id })
      .update({
        status: 'PUBLISHED',
        published_rev: rev,
        published_at: trx.fn.now(),
        ...(args.type.content ? { published_snapshot: JSON.stringify(snapshotOf(args.type, inserted)) } : {}),
      })
      .returning('*')) as ComponentRow[];
    return { row, rev: await writeRevision(trx, { type: args.type, id: row.id, siteId: row.site_id, revType: 1, actor: args.actor }) };
  });
}

/**
 * Changes one entity under a row lock and writes the revision; `change` answers the new column values,
 * or null to change nothing (then no revision is written and the row is answered as it is). Given a
 * transaction, it runs in it, with no savepoint of its own: a release publishes hundreds of items in one,
 * and more than 64 subtransactions would slow every other session's reads while it runs.
 */
export async function changeComponent(
  db: Knex,
  args: {
    type: ComponentType;
    id: string;
    actor: Actor;
    /** The editor's word on the change, kept with its revision. */
    comment?: string | null;
    change: (row: ComponentRow) => Promise<Record<string, unknown> | null> | Record<string, unknown> | null;
  },
): Promise<Written | null> {
  const change = async (trx: Knex.Transaction): Promise<Written | null> => {
    const current = await lockRow(trx, args.type, args.id);
    if (!current) return null;
    const columns = await args.change(current);
    if (columns === null) return { row: current, rev: (await latestRevision(trx, args.type, args.id)) as number };
    const [row] = (await trx(args.type.table)
      .where({ id: args.id })
      .update({ ...columns, updated_by: args.actor.id, updated_at: trx.fn.now() })
      .returning('*')) as ComponentRow[];
    const rev = await writeRevision(trx, { type: args.type, id: row.id, siteId: row.site_id, revType: 1, actor: args.actor, comment: args.comment });
    return { row, rev };
  };
  return db.isTransaction ? change(db as Knex.Transaction) : db.transaction(change);
}

/** While an approval is open the entity stays PENDING_APPROVAL, and an archived one stays off the runtime. */
function statusAfterEdit(current: ComponentStatus): ComponentStatus {
  return current === 'PENDING_APPROVAL' || current === 'ARCHIVED' ? current : 'DRAFT';
}

export function editComponent(db: Knex, args: { type: ComponentType; id: string; values: ComponentValues; actor: Actor; comment?: string | null }) {
  return changeComponent(db, { ...args, change: (row) => ({ ...columnsFor(args.type, args.values), status: statusAfterEdit(row.status) }) });
}

/** The draft becomes the state at `rev`, as a new revision; what is published stays as it was. */
export function restoreComponent(db: Knex, args: { type: ComponentType; id: string; rev: number; actor: Actor }) {
  return changeComponent(db, {
    ...args,
    change: async (row) => {
      const old = await rowAtRevision(db, args.type, args.id, args.rev);
      if (!old) return null;
      const columns: Record<string, unknown> = { name: old.name };
      for (const field of args.type.fields.filter((candidate) => candidate.writable)) {
        const column = columnOf(field.name);
        columns[column] = field.json ? JSON.stringify(old[column]) : old[column];
      }
      return { ...columns, status: row.status === 'PENDING_APPROVAL' ? 'PENDING_APPROVAL' : 'DRAFT' };
    },
  });
}

/**
 * Publishes exactly revision `rev`: status PUBLISHED, `published_rev`, `published_at` and, for content,
 * the snapshot of that revision. Publishing the revision already published is a no-op.
 */
export function publishComponentRevision(db: Knex, args: { type: ComponentType; id: string; rev: number; actor: Actor }) {
  return changeComponent(db, {
    ...args,
    change: async (row) => {
      if (row.status === 'PUBLISHED' && row.published_rev === args.rev) return null;
      const published = await rowAtRevision(db, args.type, args.id, args.rev);
      if (!published) throw notFound(`${args.type.type} ${args.id} has no revision ${args.rev}.`, 'REVISION_NOT_FOUND');
      return {
        status: 'PUBLISHED',
        published_rev: args.rev,
        published_at: db.fn.now(),
        ...(args.type.content ? { published_snapshot: JSON.stringify(snapshotOf(args.type, published)) } : {}),
      };
    },
  });
}

export function setComponentStatus(db: Knex, args: { type: ComponentType; id: string; status: ComponentStatus; actor: Actor; onlyFrom?: ComponentStatus }) {
  return changeComponent(db, {
    ...args,
    change: (row) => (row.status === args.status || (args.onlyFrom && row.status !== args.onlyFrom) ? null : { status: args.status }),
  });
}

/** Deletes the entity; its last state is written to the audit as a deleting revision first. */
export async function deleteComponent(db: Knex, args: { type: ComponentType; id: string; actor: Actor }): Promise<boolean> {
  return db.transaction(async (trx) => {
    const current = await lockRow(trx, args.type, args.id);
    if (!current) return false;
    await writeRevision(trx, { type: args.type, id: args.id, siteId: current.site_id, revType: 2, actor: args.actor });
    await trx(args.type.table).where({ id: args.id }).delete();
    return true;
  });
}

/** A site's drafts of a type, newest first, in one status when asked. */
export async function listComponents(db: Knex, args: { type: ComponentType; siteId: string; status?: string; page: PageRequest }): Promise<Page<ComponentRow>> {
  const rows = db(args.type.table).select('*').where({ site_id: args.siteId });
  if (args.status) rows.andWhere({ status: args.status });
  return paginate<ComponentRow>({ query: rows, ...args.page, timeColumn: 'created_at', idColumn: 'id' });
}

/** What the runtime serves: the published snapshot whose slug is `slug` (the slug of the snapshot, not the draft). */
export async function publishedBySlug(
  db: Knex,
  args: { type: ComponentType; siteId: string; slug: string },
): Promise<{ published_snapshot: Record<string, unknown>; published_rev: number; published_at: Date } | undefined> {
  return db(args.type.table)
    .where({ site_id: args.siteId })
    .whereNot({ status: 'ARCHIVED' })
    .whereRaw("published_snapshot->>'slug' = ?", [args.slug])
    .first('published_snapshot', 'published_rev', 'published_at');
}

/**
 * What approving a revision would change: its differences from what is published now (from nothing, for a
 * first publish). Null when the entity or the revision is gone.
 */
export async function changesAgainstLive(
  db: Knex,
  args: { type: ComponentType; id: string; rev: number },
): Promise<{ against: 'published' | 'nothing'; changes: FieldChange[] } | null> {
  return (await changesAgainstLiveOfMany(db, [args]))[0];
}

/**
 * `changesAgainstLive` for a page of submissions, in answer order, with two queries per component type
 * (the entities, then every revision needed from the audit table), however many items there are.
 */
export async function changesAgainstLiveOfMany(
  db: Knex,
  items: Array<{ type: ComponentType; id: string; rev: number }>,
): Promise<Array<{ against: 'published' | 'nothing'; changes: FieldChange[] } | null>> {
  const answers = new Array<{ against: 'published' | 'nothing'; changes: FieldChange[] } | null>(items.length).fill(null);
  const byType = new Map<ComponentType, number[]>();
  items.forEach((item, index) => byType.set(item.type, [...(byType.get(item.type) ?? []), index]));
  for (const [type, indexes] of byType) {
    const ids = [...new Set(indexes.map((index) => items[index].id))];
    const entities = new Map(((await db(type.table).whereIn('id', ids)) as ComponentRow[]).map((row) => [row.id, row]));
    const wanted = indexes.flatMap((index) => {
      const published = entities.get(items[index].id)?.published_rev;
      return [[items[index].id, items[index].rev], ...(typeof published === 'number' ? [[items[index].id, published]] : [])];
    });
    const revisions = await revisionsOf(db, type, wanted as Array<[string, number]>);
    for (const index of indexes) {
      const { id, rev } = items[index];
      const entity = entities.get(id);
      const submitted = revisions.get(`${id}@${rev}`);
      if (!entity || !submitted) continue;
      const live = typeof entity.published_rev === 'number' ? revisions.get(`${id}@${entity.published_rev}`) : undefined;
      answers[index] = { against: live ? 'published' : 'nothing', changes: jsonDiff(live ? snapshotOf(type, live) : {}, snapshotOf(type, submitted)) };
    }
  }
  return answers;
}
