import { Knex } from 'knex';
import { conflict, notFound } from '../../lib/errors';
import { Page, PageRequest, paginate } from '../paging';
import type { Actor } from '../../domain/actor';
import { isArchiveFolder } from '../../domain/archival';

/**
 * Legal holds on archive files (migration 028): on one file, or on every archive file of a site. The
 * database itself refuses to delete a held file's row; these are the API's side of the same rule.
 */

export const HOLD_TABLE = 'settings.archive_hold';
const REFUSAL_TABLE = 'settings.archive_hold_refusal';
/** The SQLSTATE the database raises when a held archive file's row is deleted (migration 028). */
const HELD_SQLSTATE = 'OFH01';
/** How many of a hold's refused deletions its answer lists, newest first. */
const REFUSALS_SHOWN = 20;

export interface ArchiveHoldRow {
  id: string;
  asset_id: string | null;
  site_id: string | null;
  reason: string;
  held_by: string;
  held_by_name: string | null;
  held_at: Date;
  released_by: string | null;
  released_by_name: string | null;
  release_reason: string | null;
  released_at: Date | null;
}

export interface HoldRefusalRow {
  asset_id: string;
  file_name: string;
  refused_by: string;
  refused_by_name: string | null;
  refused_at: Date;
}

/** A hold with the deletions it refused, newest first. */
export type ArchiveHold = ArchiveHoldRow & { refusals: HoldRefusalRow[] };

async function withRefusals(db: Knex, holds: ArchiveHoldRow[]): Promise<ArchiveHold[]> {
  if (holds.length === 0) return [];
  // The newest REFUSALS_SHOWN of each hold, counted in the database: a hold refused often is read as fast.
  const ranked = db(REFUSAL_TABLE)
    .whereIn(
      'hold_id',
      holds.map((hold) => hold.id),
    )
    .select('*', db.raw('row_number() over (partition by hold_id order by refused_at desc, id) as place'));
  const refusals = (await db
    .from(ranked.as('ranked'))
    .where('place', '<=', REFUSALS_SHOWN)
    .orderBy([{ column: 'refused_at', order: 'desc' }, { column: 'id' }])
    .select('hold_id', 'asset_id', 'file_name', 'refused_by', 'refused_by_name', 'refused_at')) as Array<HoldRefusalRow & { hold_id: string }>;
  return holds.map((hold) => ({
    ...hold,
    refusals: refusals.filter((refusal) => refusal.hold_id === hold.id).map(({ hold_id: _holdId, ...refusal }) => refusal),
  }));
}

/** Holds, newest first: on one file, or one site's (the site's own holds and those on its files), open or released, when asked. */
export async function listArchiveHolds(
  db: Knex,
  args: { assetId?: string; siteId?: string; state?: 'OPEN' | 'RELEASED'; page: PageRequest },
): Promise<Page<ArchiveHold>> {
  const rows = db(`${HOLD_TABLE} as h`).select('h.*');
  if (args.assetId) rows.where('h.asset_id', args.assetId);
  if (args.siteId)
    rows.where((scope) => scope.where('h.site_id', args.siteId!).orWhereIn('h.asset_id', db('assets.asset').where({ site_id: args.siteId! }).select('id')));
  if (args.state === 'OPEN') rows.whereNull('h.released_at');
  if (args.state === 'RELEASED') rows.whereNotNull('h.released_at');
  const page = await paginate<ArchiveHoldRow>({ query: rows, ...args.page, timeColumn: 'h.held_at', idColumn: 'h.id' });
  return { ...page, items: await withRefusals(db, page.items) };
}

export async function findArchiveHold(db: Knex, id: string): Promise<ArchiveHold> {
  const hold = (await db(HOLD_TABLE).where({ id }).first()) as ArchiveHoldRow | undefined;
  if (!hold) throw notFound(`No legal hold ${id}.`, 'ARCHIVE_HOLD_NOT_FOUND');
  return (await withRefusals(db, [hold]))[0];
}

/**
 * Holds one archive file, or every archive file of a site. A file must exist and be an archive file (404,
 * 409 NOT_AN_ARCHIVE_FILE); a site need not have archives yet, its coming ones are held as they are written.
 */
export async function holdArchives(db: Knex, args: { assetId?: string; siteId?: string; reason: string; actor: Actor }): Promise<ArchiveHold> {
  return db.transaction(async (trx) => {
    if (args.assetId) {
      // Locked until the hold is written: a delete of the file waits, then meets the hold (or the hold meets no file).
      const asset = (await trx('assets.asset').where({ id: args.assetId }).forKeyShare().first('folder')) as { folder: string } | undefined;
      if (!asset) throw notFound(`No asset ${args.assetId}.`);
      if (!isArchiveFolder(asset.folder)) throw conflict('NOT_AN_ARCHIVE_FILE', `Asset ${args.assetId} is not an archive file: only archive files are held.`);
    }
    const [hold] = (await trx(HOLD_TABLE)
      .insert({
        asset_id: args.assetId ?? null,
        site_id: args.assetId ? null : args.siteId,
        reason: args.reason,
        held_by: args.actor.id,
        held_by_name: args.actor.name,
      })
      .returning('*')) as ArchiveHoldRow[];
    return { ...hold, refusals: [] };
  });
}

/** Releases a hold, with the reason; a released hold stays as it was released (409 ARCHIVE_HOLD_RELEASED). */
export async function releaseArchiveHold(db: Knex, args: { id: string; reason: string; actor: Actor }): Promise<ArchiveHold> {
  const released = (await db(HOLD_TABLE)
    .where({ id: args.id })
    .whereNull('released_at')
    .update({ released_by: args.actor.id, released_by_name: args.actor.name, release_reason: args.reason, released_at: db.fn.now() })
    .returning('id')) as Array<{ id: string }>;
  if (released.length === 0) {
    const hold = await findArchiveHold(db, args.id);
    throw conflict('ARCHIVE_HOLD_RELEASED', `Legal hold ${hold.id} was released at ${hold.released_at!.toISOString()}.`);
  }
  return findArchiveHold(db, args.id);
}

/**
 * Refuses the deletion of a held archive file: the refusal is recorded (who, when, which file, under which
 * hold), then 409 ARCHIVE_HELD, whoever asks, ADMIN included. A file no hold covers passes.
 */
export async function refuseIfHeld(db: Knex, args: { asset: { id: string; site_id: string; folder: string; name: string }; actor: Actor }): Promise<void> {
  if (!isArchiveFolder(args.asset.folder)) return;
  const hold = (await db(HOLD_TABLE)
    .whereNull('released_at')
    .andWhere((scope) => scope.where({ asset_id: args.asset.id }).orWhere({ site_id: args.asset.site_id }))
    .orderBy('held_at')
    .first()) as ArchiveHoldRow | undefined;
  if (!hold) return;
  await db(REFUSAL_TABLE).insert({
    hold_id: hold.id,
    asset_id: args.asset.id,
    site_id: args.asset.site_id,
    file_name: args.asset.name,
    refused_by: args.actor.id,
    refused_by_name: args.actor.name,
  });
  throw conflict(
    'ARCHIVE_HELD',
    `Archive file ${args.asset.id} is under legal hold ${hold.id} (${hold.asset_id ? 'on the file' : `on site ${hold.site_id}`}, since ${hold.held_at.toISOString()}): no one deletes it until the hold is released.`,
  );
}

/** Whether an error is the database's refusal to delete a held archive file (a hold set since refuseIfHeld looked). */
export function isHeldRefusal(error: unknown): boolean {
  return (error as { code?: string })?.code === HELD_SQLSTATE;
}
