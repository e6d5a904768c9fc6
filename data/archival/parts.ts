import { Knex } from 'knex';
import { rawRowCount, rawRows } from '../db';
import { ArchiveFormat, LogType } from '../../domain/archival';

/** The settings a part's file was encoded with (JSON, the encoding's own), recorded with the part. */
export type EncoderSettings = Record<string, number | string>;

export const PART_TABLE = 'settings.archive_part';
/** Each part's exact ids, one sorted array per part. */
export const PART_IDS_TABLE = 'settings.archive_part_ids';

export type PartState = 'EXPORTED' | 'CONFIRMED' | 'DELETED';

/** One file of an archive run, recorded before it is uploaded. */
export interface ArchivePartRow {
  id: string;
  workflow_id: string;
  run_id: string;
  log_type: LogType;
  site_id: string;
  cutoff: Date;
  part_no: number;
  file_name: string;
  row_count: number;
  min_id: number;
  max_id: number;
  size_bytes: number;
  sha256: string;
  state: PartState;
  asset_id: string | null;
  rows_deleted: number;
  error: string | null;
  /** The month archived whole that the part belongs to; null for a part of the row path. */
  partition_archive_id: string | null;
  /** What its file is written in; its size and sha256 are the file's as written. */
  format: ArchiveFormat;
  /** A month's part: the snapshot its site's export read (`pg_snapshot` as text); null on the row path. */
  export_snapshot: string | null;
  /** The settings its file was encoded with (Parquet); null for CSV and for a part recorded before migration 037. */
  encoder: EncoderSettings | null;
}

/** The part the manifest records under `partId`, if any. */
export async function findRecordedPart(db: Knex, partId: string): Promise<ArchivePartRow | undefined> {
  return (await db(PART_TABLE).where({ id: partId }).first()) as ArchivePartRow | undefined;
}

export async function findPart(db: Knex, partId: string): Promise<ArchivePartRow> {
  const part = await findRecordedPart(db, partId);
  if (!part) throw new Error(`archive part ${partId} is not in the manifest`);
  return part;
}

/** Row-path parts an earlier run recorded but did not finish, oldest first (a month's parts finish with its archive). */
export async function unfinishedParts(db: Knex, args: { logType: LogType; siteId?: string }): Promise<ArchivePartRow[]> {
  const query = db(PART_TABLE)
    .where({ log_type: args.logType })
    .whereNot({ state: 'DELETED' })
    .whereNull('partition_archive_id')
    .orderBy(['created_at', 'part_no']);
  if (args.siteId) query.andWhere({ site_id: args.siteId });
  return query;
}

/** The sink confirmed a part: its rows may now be deleted. */
export async function markPartConfirmed(db: Knex, args: { partId: string; assetId: string }): Promise<void> {
  await db(PART_TABLE).where({ id: args.partId, state: 'EXPORTED' }).update({ state: 'CONFIRMED', asset_id: args.assetId, updated_at: db.fn.now() });
}

/** Deletes one slice of a part's ids (1-based, inclusive) from its log table; answers how many rows went. */
export async function deletePartSlice(db: Knex, args: { table: string; partId: string; from: number; to: number }): Promise<number> {
  return rawRowCount(db, `delete from ${args.table} t where t.id = any((select ids[? : ?] from ${PART_IDS_TABLE} where part_id = ?)::bigint[])`, [
    args.from,
    args.to,
    args.partId,
  ]);
}

/** How many of a part's rows are still in its log table. */
export async function partRowsLeft(db: Knex, args: { table: string; partId: string }): Promise<number> {
  const [left] = await rawRows<{ n: number }>(
    db,
    `select count(*) as n from ${args.table} t where t.id = any((select ids from ${PART_IDS_TABLE} where part_id = ?)::bigint[])`,
    [args.partId],
  );
  return Number(left.n);
}

/** A part whose rows are all deleted: DELETED, and its id array dropped. */
export async function markPartDeleted(db: Knex, args: { partId: string; rowsDeleted: number }): Promise<void> {
  await db.transaction(async (trx) => {
    await trx(PART_TABLE).where({ id: args.partId }).update({ state: 'DELETED', rows_deleted: args.rowsDeleted, updated_at: trx.fn.now() });
    await trx(PART_IDS_TABLE).where({ part_id: args.partId }).delete();
  });
}

/** The row-path parts a run already recorded for a site (its export committed), in order. */
export async function recordedParts(db: Knex, args: { runId: string; siteId: string; logType: LogType }): Promise<ArchivePartRow[]> {
  return db(PART_TABLE).where({ run_id: args.runId, site_id: args.siteId, log_type: args.logType }).whereNull('partition_archive_id').orderBy('part_no');
}

/** The parts a month's archive already recorded for a site (its export committed), in order. */
export async function recordedPartitionParts(db: Knex, args: { partitionArchiveId: string; siteId: string }): Promise<ArchivePartRow[]> {
  return db(PART_TABLE).where({ partition_archive_id: args.partitionArchiveId, site_id: args.siteId }).orderBy('part_no');
}
