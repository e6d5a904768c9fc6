import { Knex } from 'knex';
import { LogType, retentionCutoff } from '../../domain/archival';
import { check } from '../../domain/workflow-input';
import { rawRowCount, rawRows } from '../db';
import { listLogPartitions } from './log-partitions';
import { LOG_TABLES, sitesInTable } from './log-tables';
import { ArchivePartRow, PART_IDS_TABLE, PART_TABLE } from './parts';
import { resolveRetention } from './policies';

/** Partition-drop archival's manifest (migration 030): one row per log-table month archived whole. */
export const PARTITION_ARCHIVE_TABLE = 'settings.archive_partition';

export type PartitionArchiveState = 'EXPORTING' | 'EXPORTED' | 'DETACHED' | 'DROPPED';

export interface PartitionArchiveRow {
  id: string;
  workflow_id: string;
  run_id: string;
  log_type: LogType;
  /** Schema-qualified, as `listLogPartitions` names it. */
  partition_name: string;
  range_from: Date;
  range_to: Date;
  /** The sites whose rows the month held when it was judged expired: the only ones it exports. */
  site_ids: string[];
  state: PartitionArchiveState;
  rows_dropped: number | null;
  rows_returned: number | null;
  rows_by_site: Record<string, number> | null;
  /** The month's writes are noted from its opening on (migration 033): its drop may judge late rows by the ledger. */
  late_rows_noted: boolean;
  /** How its drop told the rows archived from the late ones: by the late-row ledger, or by joining the parts' ids. */
  stray_check: 'ledger' | 'ids' | null;
}

/** A month every one of whose sites is past retention, with those sites. */
export interface ExpiredPartition {
  name: string;
  from: string;
  to: string;
  siteIds: string[];
}

/**
 * The log type's months that are past retention whole: months that have ended, hold rows, and whose every
 * site has an enabled policy whose cutoff (for a run started at `runStart`) is at or after the month's end.
 * A month with a site in `excludeSites`, or one an open partition archive already holds, is left to the row
 * path and to that archive. An empty month is left as it is: there is nothing in it to archive.
 */
export async function expiredLogPartitions(db: Knex, args: { logType: LogType; runStart: number; excludeSites: string[] }): Promise<ExpiredPartition[]> {
  const open = new Set((await db(PARTITION_ARCHIVE_TABLE).whereNot({ state: 'DROPPED' }).pluck('partition_name')) as string[]);
  const cutoffs = new Map<string, Date | null>();
  const cutoffOf = async (siteId: string) => {
    if (!cutoffs.has(siteId)) {
      const retention = await resolveRetention(db, args.logType, siteId);
      cutoffs.set(siteId, retention.enabled && retention.retentionDays !== null ? retentionCutoff(args.runStart, retention.retentionDays) : null);
    }
    return cutoffs.get(siteId)!;
  };
  const expired: ExpiredPartition[] = [];
  for (const partition of await listLogPartitions(db, args.logType)) {
    if (partition.to.getTime() > args.runStart || open.has(partition.name)) continue;
    const siteIds = await sitesInTable(db, partition.name);
    if (siteIds.length === 0 || siteIds.some((siteId) => args.excludeSites.includes(siteId))) continue;
    let whole = true;
    for (const siteId of siteIds) {
      const cutoff = await cutoffOf(siteId);
      if (!cutoff || cutoff.getTime() < partition.to.getTime()) whole = false;
    }
    if (whole) expired.push({ name: partition.name, from: partition.from.toISOString(), to: partition.to.toISOString(), siteIds });
  }
  return expired;
}

/**
 * Opens the archive of an expired month, or answers the one already open for it (one per partition). The
 * month must be a partition of the log type's table with those bounds, as the catalogue names it: the name
 * is written into statements later, and a caller that skips the run (a raw activity) names no other table.
 */
export async function openPartitionArchive(
  db: Knex,
  args: { workflowId: string; runId: string; logType: LogType; partition: ExpiredPartition },
): Promise<PartitionArchiveRow> {
  const known = (await listLogPartitions(db, args.logType)).find((partition) => partition.name === args.partition.name);
  if (
    !known ||
    known.from.toISOString() !== new Date(args.partition.from).toISOString() ||
    known.to.toISOString() !== new Date(args.partition.to).toISOString()
  ) {
    throw new Error(`${args.partition.name} is not a month partition of ${LOG_TABLES[args.logType]} from ${args.partition.from} to ${args.partition.to}`);
  }
  await db.transaction(async (trx) => {
    const [opened] = await rawRows<{ id: string }>(
      trx,
      `insert into ${PARTITION_ARCHIVE_TABLE} (workflow_id, run_id, log_type, partition_name, range_from, range_to, site_ids, late_rows_noted)
       values (?, ?, ?, ?, ?, ?, ?::text[], true)
       on conflict (partition_name) where state <> 'DROPPED' do nothing
       returning id`,
      [args.workflowId, args.runId, args.logType, args.partition.name, args.partition.from, args.partition.to, args.partition.siteIds],
    );
    if (opened) await noteLateRows(trx, { table: args.partition.name, archiveId: opened.id });
  });
  return (await db(PARTITION_ARCHIVE_TABLE).where({ partition_name: args.partition.name }).whereNot({ state: 'DROPPED' }).first()) as PartitionArchiveRow;
}

/**
 * Puts the late-row ledger's trigger on a month (migration 033), in the transaction that opens its archive:
 * every row written to the month once that commits is noted with its writer. Creating the trigger waits for
 * the month's open writers to end, so a row written before it is committed before any export's snapshot.
 * Enabled always: a session in replica mode (a restore tool) is noted too.
 */
async function noteLateRows(trx: Knex.Transaction, args: { table: string; archiveId: string }): Promise<void> {
  // DDL takes no parameters: the archive id is the database's own uuid, checked before it is written in.
  const notAnId = check.uuid('the archive id', args.archiveId);
  if (notAnId) throw new Error(notAnId);
  await trx.raw(`create or replace trigger archive_late_rows after insert on ${args.table}
                 for each row execute function settings.note_archive_late_row('${args.archiveId}')`);
  await trx.raw(`alter table ${args.table} enable always trigger archive_late_rows`);
}

export async function findPartitionArchive(db: Knex, id: string): Promise<PartitionArchiveRow> {
  const archive = (await db(PARTITION_ARCHIVE_TABLE).where({ id }).first()) as PartitionArchiveRow | undefined;
  if (!archive) throw new Error(`partition archive ${id} is not in the manifest`);
  return archive;
}

/** Partition archives an earlier run opened and did not finish, oldest first. */
export async function unfinishedPartitionArchives(db: Knex, logType: LogType): Promise<PartitionArchiveRow[]> {
  return db(PARTITION_ARCHIVE_TABLE).where({ log_type: logType }).whereNot({ state: 'DROPPED' }).orderBy('created_at');
}

export async function partsOfPartitionArchive(db: Knex, id: string): Promise<ArchivePartRow[]> {
  return db(PART_TABLE).where({ partition_archive_id: id }).orderBy(['site_id', 'part_no']);
}

/** Moves an archive on, from the state it must be in (a repeat finds it moved and changes nothing). */
export async function advancePartitionArchive(db: Knex, args: { id: string; from: PartitionArchiveState; to: PartitionArchiveState }): Promise<void> {
  await db(PARTITION_ARCHIVE_TABLE).where({ id: args.id, state: args.from }).update({ state: args.to, updated_at: db.fn.now() });
}

export type PartitionAttachment = 'ATTACHED' | 'DETACH_PENDING' | 'DETACHED' | 'MISSING';

/** Where a month's table stands: a partition of its log table, half detached (an interrupted DETACH CONCURRENTLY), a table of its own, or gone. */
export async function partitionAttachment(db: Knex, name: string): Promise<PartitionAttachment> {
  const [row] = await rawRows<{ exists: boolean; pending: boolean | null }>(
    db,
    `select to_regclass(?) is not null as exists,
            (select i.inhdetachpending from pg_inherits i where i.inhrelid = to_regclass(?)) as pending`,
    [name, name],
  );
  if (!row.exists) return 'MISSING';
  if (row.pending === null) return 'DETACHED';
  return row.pending ? 'DETACH_PENDING' : 'ATTACHED';
}

/**
 * Detaches a month from its log table without blocking its writers or readers (DETACH … CONCURRENTLY, which
 * waits for the queries that use the table to end), or finishes a detach that was interrupted half-way.
 * Runs outside a transaction, as PostgreSQL requires.
 */
export async function detachPartition(db: Knex, args: { logType: LogType; name: string; finalize: boolean }): Promise<void> {
  await db.raw(`alter table ${LOG_TABLES[args.logType]} detach partition ${args.name} ${args.finalize ? 'finalize' : 'concurrently'}`);
}

export interface DroppedPartition {
  rowsDropped: number;
  /** Rows written to the month after its export (a late write, a restore), put back into the log table. */
  rowsReturned: number;
  /** Rows dropped per site. */
  bySite: Record<string, number>;
}

/** The advisory lock a drop of one partition holds: one drop at a time, whichever attempt or worker runs it. */
export const partitionDropLock = (name: string) => `archive-partition-drop:${name}`;

/**
 * Drops a detached month whose parts are all confirmed by the sink, in one transaction that also records it:
 * the parts DELETED, the archive DROPPED. Only rows some part of this archive holds are dropped: a row
 * written to the month after its export is put back into the log table first (its month created again), for
 * the row path to archive. No row is deleted by a DELETE.
 */
export async function dropArchivedPartition(db: Knex, archive: PartitionArchiveRow): Promise<DroppedPartition> {
  const parent = LOG_TABLES[archive.log_type];
  return db.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [partitionDropLock(archive.partition_name)]);
    const current = (await trx(PARTITION_ARCHIVE_TABLE).where({ id: archive.id }).forUpdate().first()) as PartitionArchiveRow;
    if (current.state === 'DROPPED') {
      return { rowsDropped: Number(current.rows_dropped), rowsReturned: Number(current.rows_returned), bySite: current.rows_by_site ?? {} };
    }
    if (current.state !== 'DETACHED') throw new Error(`${archive.partition_name} is ${current.state}, not DETACHED: it is not dropped`);
    // Only the rows of parts the sink confirmed may go: a part that is not (an export attempt that outlived its turn) stops the drop.
    const [{ n: unconfirmed }] = await rawRows<{ n: number }>(
      trx,
      `select count(*)::int as n from ${PART_TABLE} where partition_archive_id = ? and (state <> 'CONFIRMED' or asset_id is null)`,
      [archive.id],
    );
    if (unconfirmed > 0) throw new Error(`${unconfirmed} part(s) of ${archive.partition_name} are not confirmed by the sink: it is not dropped`);
    let table = archive.partition_name;
    await trx.raw(`lock table ${table} in access exclusive mode`);
    const judged = await judgeMonthRows(trx, { archive: current, table });
    const returning = judged.perSite.reduce((sum, row) => sum + row.strays, 0);
    if (returning > 0) {
      // The month's name is taken by this table until it is dropped: it steps aside for the month made again.
      const [schema, relation] = table.split('.');
      const aside = `${relation}_detached`;
      await trx.raw(`alter table ${table} rename to ${aside}`);
      table = `${schema}.${aside}`;
      await trx.raw('select settings.ensure_log_partitions(?::regclass, ?::date, ?::date)', [
        parent,
        archive.range_from.toISOString().slice(0, 10),
        archive.range_from.toISOString().slice(0, 10),
      ]);
      // Named columns, not positions: the log table may have gained a column since the month was made.
      const columns = (
        await rawRows<{ name: string }>(
          trx,
          `select quote_ident(attname) as name from pg_attribute where attrelid = ?::regclass and attnum > 0 and not attisdropped order by attnum`,
          [table],
        )
      ).map((column) => column.name);
      const putBack = await rawRowCount(
        trx,
        `insert into ${parent} (${columns.join(', ')}) overriding system value ${judged.selectStrays(table, columns.map((name) => `t.${name}`).join(', '))}`,
        judged.strayBindings,
      );
      // Every stray the judge counted must be back before the month goes: else nothing is dropped.
      if (putBack !== returning) throw new Error(`${putBack} rows of ${archive.partition_name} were put back of ${returning} judged late: it is not dropped`);
    }
    const bySite = Object.fromEntries(judged.perSite.filter((row) => row.archived > 0).map((row) => [row.site_id, row.archived]));
    const rowsDropped = judged.perSite.reduce((sum, row) => sum + row.archived, 0);
    await trx.raw(`drop table ${table}`);
    await trx(PART_TABLE)
      .where({ partition_archive_id: archive.id })
      .update({ state: 'DELETED', rows_deleted: trx.ref('row_count'), updated_at: trx.fn.now() });
    await trx(PART_IDS_TABLE)
      .whereIn('part_id', trx(PART_TABLE).where({ partition_archive_id: archive.id }).select('id'))
      .delete();
    await trx(PARTITION_ARCHIVE_TABLE)
      .where({ id: archive.id })
      .update({
        state: 'DROPPED',
        rows_dropped: rowsDropped,
        rows_returned: returning,
        rows_by_site: JSON.stringify(bySite),
        stray_check: judged.check,
        updated_at: trx.fn.now(),
      });
    await trx(LATE_ROW_TABLE).where({ partition_archive_id: archive.id }).delete();
    return { rowsDropped, rowsReturned: returning, bySite };
  });
}

/** The late-row ledger (migration 033): rows written to a month once its archive opened, with their writer. */
export const LATE_ROW_TABLE = 'settings.archive_partition_late_row';

interface JudgedMonth {
  check: 'ledger' | 'ids';
  /** Per site of the month's table: rows some part of the archive holds, and the strays to put back. */
  perSite: Array<{ site_id: string; archived: number; strays: number }>;
  /** The statement that selects the strays' `columns` from the month's `table` (as `t`), with its bindings. */
  selectStrays(table: string, columns: string): string;
  strayBindings: readonly Knex.RawBinding[] | Knex.ValueDict;
}

/**
 * Tells the rows of a detached month that its parts hold from the strays to put back: rows of a site the
 * archive did not export, rows a part of another archive or run holds (never exported twice), and rows
 * written after their site's export. The ledger answers the last from the handful of rows noted since the
 * archive opened, so the month's rows are only counted. It is used only when every part recorded its
 * export's snapshot, and trusted only when each site's rows left in the month are exactly the rows its parts
 * hold; otherwise (an archive opened before the ledger, a row deleted from the month meanwhile) the rows are
 * judged by joining them with every id the parts hold, as exact and slower.
 */
async function judgeMonthRows(trx: Knex.Transaction, args: { archive: PartitionArchiveRow; table: string }): Promise<JudgedMonth> {
  const { archive, table } = args;
  const parts = (await trx(PART_TABLE).where({ partition_archive_id: archive.id }).select('site_id', 'row_count', 'export_snapshot')) as Array<
    Pick<ArchivePartRow, 'site_id' | 'row_count' | 'export_snapshot'>
  >;
  if (archive.late_rows_noted && parts.every((part) => part.export_snapshot !== null)) {
    // Written late (its writer not visible to its site's export, or its site not exported), or held by a row-path part.
    const candidates = `select l.row_id as id from ${LATE_ROW_TABLE} l
                          left join (select distinct site_id, export_snapshot::text as snapshot from ${PART_TABLE} where partition_archive_id = cast(:archiveId as uuid)) s
                            on s.site_id = l.site_id
                         where l.partition_archive_id = cast(:archiveId as uuid)
                           and (s.snapshot is null or not pg_visible_in_snapshot(l.xid, cast(s.snapshot as pg_snapshot)))
                        union
                        select u.id from ${PART_TABLE} p join ${PART_IDS_TABLE} held on held.part_id = p.id cross join unnest(held.ids) as u(id)
                         where p.log_type = :logType and p.state <> 'DELETED' and p.partition_archive_id is null and p.site_id = any(cast(:siteIds as text[]))`;
    const strayBindings = { archiveId: archive.id, logType: archive.log_type, siteIds: archive.site_ids };
    const stray = `(c.id is not null or not (t.site_id = any(cast(:siteIds as text[]))))`;
    // Usually nothing was written late and no row-path part holds a row of the month: then the month's rows
    // are only counted per site, without a join (about 0.9 s against 1.6 s for a 2.5M-row month here). No
    // candidate can appear meanwhile: the month is detached and locked, and it is no row-path export's table.
    const [{ found: anyCandidate }] = await rawRows<{ found: boolean }>(trx, `select exists (${candidates}) as found`, strayBindings);
    const perSite = await rawRows<{ site_id: string; archived: number; strays: number }>(
      trx,
      anyCandidate
        ? `select site_id, (count(*) - count(*) filter (where stray))::int as archived, (count(*) filter (where stray))::int as strays
             from (select t.site_id, ${stray} as stray from ${table} t left join (${candidates}) c on c.id = t.id) judged
            group by site_id`
        : `select site_id, case when listed then n else 0 end as archived, case when listed then 0 else n end as strays
             from (select t.site_id, t.site_id = any(cast(:siteIds as text[])) as listed, count(*)::int as n from ${table} t group by t.site_id) counted`,
      strayBindings,
    );
    const exported = new Map<string, number>();
    for (const part of parts) exported.set(part.site_id, (exported.get(part.site_id) ?? 0) + Number(part.row_count));
    const archivedIn = new Map(perSite.map((row) => [row.site_id, row.archived]));
    if (archive.site_ids.every((siteId) => (archivedIn.get(siteId) ?? 0) === (exported.get(siteId) ?? 0))) {
      return {
        check: 'ledger',
        perSite,
        selectStrays: (from, columns) => `select ${columns} from ${from} t left join (${candidates}) c on c.id = t.id where ${stray}`,
        strayBindings,
      };
    }
  }
  // One hash join of the month's rows with the ids its parts hold: per site, the rows archived and the strays.
  const archivedIds = `select u.id from ${PART_TABLE} p join ${PART_IDS_TABLE} held on held.part_id = p.id cross join unnest(held.ids) as u(id)
                       where p.partition_archive_id = ?::uuid`;
  const perSite = await rawRows<{ site_id: string; archived: number; strays: number }>(
    trx,
    `select t.site_id, count(a.id)::int as archived, (count(*) - count(a.id))::int as strays
     from ${table} t left join (${archivedIds}) a on a.id = t.id group by t.site_id`,
    [archive.id],
  );
  return {
    check: 'ids',
    perSite,
    selectStrays: (from, columns) => `select ${columns} from ${from} t where not exists (select 1 from (${archivedIds}) a where a.id = t.id)`,
    strayBindings: [archive.id],
  };
}
