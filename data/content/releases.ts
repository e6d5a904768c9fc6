import { Knex } from 'knex';
import { conflict, notFound } from '../../lib/errors';
import { Page, PageRequest, paginate } from '../paging';
import { componentType, ComponentType } from './component-types';
import { ComponentRow, publishComponentRevision } from './components';
import { RELEASE_ITEM_TABLE, RELEASE_TABLE } from './release-tables';
import { revisionsOf } from './revisions';
import type { Actor } from '../../domain/actor';
import { ReleaseStatus, SUBMITTABLE_RELEASE_STATUSES } from '../../domain/releases';

export { RELEASE_ITEM_TABLE, RELEASE_TABLE };

/** As many items as one release may hold (Sanity's limit, which its users find enough). */
export const MAX_RELEASE_ITEMS = 1000;

export interface ReleaseRow {
  id: string;
  site_id: string;
  name: string;
  status: ReleaseStatus;
  version: number;
  pending_correlation_id: string | null;
  failure: ReleaseFailure[] | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  published_at: Date | null;
  published_by: string | null;
}

export interface ReleaseItemRow {
  id: string;
  release_id: string;
  component_type: string;
  component_id: string;
  revision: number;
  added_by: string | null;
  added_at: Date;
}

/** Why one item (or the release itself, without an item) stopped a publish. */
export interface ReleaseFailure {
  itemId: string | null;
  componentType: string | null;
  componentId: string | null;
  reason: 'ITEM_DELETED' | 'REVISION_GONE' | 'ITEM_CHANGED' | 'ITEM_PENDING_APPROVAL' | 'RELEASE_CHANGED' | 'RELEASE_EMPTY';
  message: string;
}

export async function createRelease(db: Knex, args: { siteId: string; name: string; actor: Actor }): Promise<ReleaseRow> {
  const [row] = (await db(RELEASE_TABLE).insert({ site_id: args.siteId, name: args.name, created_by: args.actor.id }).returning('*')) as ReleaseRow[];
  return row;
}

export async function findRelease(db: Knex, id: string): Promise<ReleaseRow | undefined> {
  return db<ReleaseRow>(RELEASE_TABLE).where({ id }).first();
}

export async function listReleases(db: Knex, args: { siteId: string; page: PageRequest }): Promise<Page<ReleaseRow>> {
  return paginate<ReleaseRow>({ query: db(RELEASE_TABLE).select('*').where({ site_id: args.siteId }), ...args.page, timeColumn: 'created_at', idColumn: 'id' });
}

export async function itemsOfRelease(db: Knex, releaseId: string): Promise<ReleaseItemRow[]> {
  return db<ReleaseItemRow>(RELEASE_ITEM_TABLE)
    .where({ release_id: releaseId })
    .orderBy([{ column: 'added_at' }, { column: 'id' }]);
}

/** How many items each release of the page holds, by release id. */
export async function itemCounts(db: Knex, releaseIds: string[]): Promise<Map<string, number>> {
  if (releaseIds.length === 0) return new Map();
  const rows = (await db(RELEASE_ITEM_TABLE).whereIn('release_id', releaseIds).groupBy('release_id').select('release_id').count('* as count')) as Array<{
    release_id: string;
    count: string;
  }>;
  return new Map(rows.map((row) => [row.release_id, Number(row.count)]));
}

/** Who may publish, schedule, cancel or change the release: ADMIN once it holds an ADMIN-only type, else EDITOR. */
export async function releaseAuthorRole(db: Knex, releaseId: string): Promise<'EDITOR' | 'ADMIN'> {
  const types = await itemTypesOfRelease(db, releaseId);
  return types.some((name) => componentType(name)?.authorRole === 'ADMIN') ? 'ADMIN' : 'EDITOR';
}

/** The distinct component types a release holds: what its approval resolves policies for. */
export async function itemTypesOfRelease(db: Knex, releaseId: string): Promise<string[]> {
  return (await db(RELEASE_ITEM_TABLE)
    .where({ release_id: releaseId })
    .distinct('component_type')
    .orderBy('component_type')
    .pluck('component_type')) as string[];
}

/** 409 RELEASE_LOCKED while a release waits for approval or once it is published: its items are what was asked about. */
export function refuseLockedRelease(release: Pick<ReleaseRow, 'id' | 'status'>): void {
  if (release.status === 'PUBLISHED') throw conflict('RELEASE_LOCKED', `Release ${release.id} is published: its items no longer change.`);
  if (release.status === 'PENDING_APPROVAL')
    throw conflict('RELEASE_LOCKED', `Release ${release.id} is waiting for approval: its items change once it is decided.`);
}

/**
 * Changes a release's items under its row lock, moving its version on (so an approval or a schedule of the
 * set before no longer matches) and reopening a release that failed or was rejected. 409 RELEASE_LOCKED
 * while it waits for approval or once it is published.
 */
async function changeItems<T>(db: Knex, releaseId: string, change: (trx: Knex.Transaction, release: ReleaseRow) => Promise<T>): Promise<T> {
  return db.transaction(async (trx) => {
    const release = (await trx(RELEASE_TABLE).where({ id: releaseId }).forUpdate().first()) as ReleaseRow | undefined;
    if (!release) throw notFound(`No release ${releaseId}.`);
    refuseLockedRelease(release);
    const result = await change(trx, release);
    await trx(RELEASE_TABLE)
      .where({ id: releaseId })
      .update({ version: release.version + 1, status: 'OPEN', failure: null, updated_at: trx.fn.now() });
    return result;
  });
}

/** Adds an item at a revision, or sets the revision of an item the release holds already. */
export async function putReleaseItem(
  db: Knex,
  args: { releaseId: string; componentType: string; componentId: string; revision: number; actor: Actor },
): Promise<ReleaseItemRow> {
  return changeItems(db, args.releaseId, async (trx) => {
    const [{ count }] = (await trx(RELEASE_ITEM_TABLE).where({ release_id: args.releaseId }).count('* as count')) as Array<{ count: string }>;
    const existing = (await trx(RELEASE_ITEM_TABLE)
      .where({ release_id: args.releaseId, component_type: args.componentType, component_id: args.componentId })
      .first('id')) as { id: string } | undefined;
    if (!existing && Number(count) >= MAX_RELEASE_ITEMS) throw conflict('RELEASE_FULL', `A release holds at most ${MAX_RELEASE_ITEMS} items.`);
    const [row] = (await trx(RELEASE_ITEM_TABLE)
      .insert({
        release_id: args.releaseId,
        component_type: args.componentType,
        component_id: args.componentId,
        revision: args.revision,
        added_by: args.actor.id,
      })
      .onConflict(['release_id', 'component_type', 'component_id'])
      .merge(['revision', 'added_by', 'added_at'])
      .returning('*')) as ReleaseItemRow[];
    return row;
  });
}

/**
 * Deletes a release that was never published, with its items (their revisions are no longer kept for it).
 * 409 RELEASE_LOCKED while it waits for approval; a published release is a record and stays.
 */
export async function deleteRelease(db: Knex, id: string): Promise<void> {
  await db.transaction(async (trx) => {
    const release = (await trx(RELEASE_TABLE).where({ id }).forUpdate().first()) as ReleaseRow | undefined;
    if (!release) throw notFound(`No release ${id}.`);
    refuseLockedRelease(release);
    await trx(RELEASE_TABLE).where({ id }).delete();
  });
}

/** Takes an item out; false when the release does not hold it. */
export async function removeReleaseItem(db: Knex, args: { releaseId: string; itemId: string }): Promise<boolean> {
  return changeItems(db, args.releaseId, async (trx) => (await trx(RELEASE_ITEM_TABLE).where({ release_id: args.releaseId, id: args.itemId }).delete()) > 0);
}

/**
 * The release waits on approval `correlationId`, for `version`: only from OPEN, FAILED or REJECTED, and
 * only at that version (a raw run cannot reopen a published release, nor one whose items moved on). Safe
 * to repeat for the same approval. False when the release is not in a state to be submitted.
 */
export async function markReleasePending(db: Knex, args: { id: string; version: number; correlationId: string }): Promise<boolean> {
  const changed = await db(RELEASE_TABLE)
    .where({ id: args.id, version: args.version })
    .andWhere((where) =>
      where.whereIn('status', SUBMITTABLE_RELEASE_STATUSES).orWhere({ status: 'PENDING_APPROVAL', pending_correlation_id: args.correlationId }),
    )
    .update({ status: 'PENDING_APPROVAL', pending_correlation_id: args.correlationId, updated_at: db.fn.now() });
  return changed > 0;
}

/** The release's status set, unless it is already that or (with `onlyFrom`) is not that one. */
export async function setReleaseStatus(db: Knex, args: { id: string; status: ReleaseStatus; onlyFrom?: ReleaseStatus }): Promise<void> {
  const update = db(RELEASE_TABLE).where({ id: args.id }).whereNot({ status: args.status });
  if (args.onlyFrom) update.andWhere({ status: args.onlyFrom });
  await update.update({ status: args.status, updated_at: db.fn.now() });
}

class ReleaseRefused extends Error {
  constructor(readonly failures: ReleaseFailure[]) {
    super('release refused');
  }
}

/** Why an item cannot be published with the release, or null. */
function itemFailure(item: ReleaseItemRow, type: ComponentType | undefined, row: ComponentRow | undefined, revisionExists: boolean): ReleaseFailure | null {
  const failure = (reason: ReleaseFailure['reason'], message: string): ReleaseFailure => ({
    itemId: item.id,
    componentType: item.component_type,
    componentId: item.component_id,
    reason,
    message: `${item.component_type} ${item.component_id}: ${message}`,
  });
  if (!type || !row) return failure('ITEM_DELETED', 'was deleted after it was added to the release');
  if (!revisionExists) return failure('REVISION_GONE', `has no revision ${item.revision} any more`);
  if (row.status === 'PENDING_APPROVAL') return failure('ITEM_PENDING_APPROVAL', 'is waiting for an approval of its own');
  if (row.published_rev !== null && row.published_rev > item.revision)
    return failure('ITEM_CHANGED', `was published at revision ${row.published_rev} since; the release would take it back to ${item.revision}`);
  return null;
}

/**
 * Publishes every item of the release at its revision in one transaction, or none: the release and its
 * items are locked, each item is checked (deleted, revision gone, changed since, waiting for its own
 * approval), and one failure stops them all and is recorded on the release with every item that failed.
 * `version` is the version that was submitted: a release whose items changed since fails as a whole.
 * Publishing a release that is published already is a no-op, so a retried activity or callback is safe.
 */
export async function publishRelease(
  db: Knex,
  args: { id: string; version: number; actor: Actor },
): Promise<{ status: 'PUBLISHED' | 'FAILED'; failures: ReleaseFailure[] }> {
  try {
    await db.transaction(async (trx) => {
      const release = (await trx(RELEASE_TABLE).where({ id: args.id }).forUpdate().first()) as ReleaseRow | undefined;
      if (!release) throw notFound(`No release ${args.id}.`);
      if (release.status === 'PUBLISHED') return;
      const whole = (reason: ReleaseFailure['reason'], message: string) =>
        new ReleaseRefused([{ itemId: null, componentType: null, componentId: null, reason, message }]);
      if (release.version !== args.version)
        throw whole('RELEASE_CHANGED', `The release's items changed since version ${args.version} was submitted (it is at ${release.version}).`);
      const items = await itemsOfRelease(trx, args.id);
      if (items.length === 0) throw whole('RELEASE_EMPTY', 'The release holds no item.');

      // Every item's row locked, a type at a time in id order, so that no single publish changes one meanwhile.
      const byType = new Map<string, ReleaseItemRow[]>();
      for (const item of items) byType.set(item.component_type, [...(byType.get(item.component_type) ?? []), item]);
      const failures: ReleaseFailure[] = [];
      const plan: Array<{ type: ComponentType; item: ReleaseItemRow }> = [];
      for (const [typeName, ofType] of [...byType].sort(([a], [b]) => a.localeCompare(b))) {
        const type = componentType(typeName);
        const ids = ofType.map((item) => item.component_id).sort();
        const rows = type ? ((await trx(type.table).whereIn('id', ids).orderBy('id').forUpdate().select('*')) as ComponentRow[]) : [];
        const revisions = type
          ? await revisionsOf(
              trx,
              type,
              ofType.map((item) => [item.component_id, item.revision]),
            )
          : new Map();
        for (const item of ofType) {
          const row = rows.find((candidate) => candidate.id === item.component_id);
          const failure = itemFailure(item, type, row, revisions.has(`${item.component_id}@${item.revision}`));
          if (failure) failures.push(failure);
          else plan.push({ type: type!, item });
        }
      }
      if (failures.length > 0) throw new ReleaseRefused(failures);
      for (const { type, item } of plan) await publishComponentRevision(trx, { type, id: item.component_id, rev: item.revision, actor: args.actor });
      await trx(RELEASE_TABLE)
        .where({ id: args.id })
        .update({ status: 'PUBLISHED', failure: null, published_at: trx.fn.now(), published_by: args.actor.id, updated_at: trx.fn.now() });
    });
    return { status: 'PUBLISHED', failures: [] };
  } catch (error) {
    if (!(error instanceof ReleaseRefused)) throw error;
    // Recorded on the version that was submitted only: a stale attempt does not overwrite a newer state.
    await db(RELEASE_TABLE)
      .where({ id: args.id, version: args.version })
      .whereNot({ status: 'PUBLISHED' })
      .update({ status: 'FAILED', failure: JSON.stringify(error.failures), updated_at: db.fn.now() });
    return { status: 'FAILED', failures: error.failures };
  }
}

/** Each item's component as it is now (its name and status), keyed `{type}:{id}`; deleted ones are absent. */
export async function itemComponents(db: Knex, items: ReleaseItemRow[]): Promise<Map<string, { name: string; status: string }>> {
  const found = new Map<string, { name: string; status: string }>();
  const byType = new Map<string, string[]>();
  for (const item of items) byType.set(item.component_type, [...(byType.get(item.component_type) ?? []), item.component_id]);
  for (const [typeName, ids] of byType) {
    const type = componentType(typeName);
    if (!type) continue;
    const rows = (await db(type.table).whereIn('id', ids).select('id', 'name', 'status')) as Array<{ id: string; name: string; status: string }>;
    for (const row of rows) found.set(`${typeName}:${row.id}`, { name: row.name, status: row.status });
  }
  return found;
}
