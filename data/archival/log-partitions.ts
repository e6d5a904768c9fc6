import { Knex } from 'knex';
import { LogType } from '../../domain/archival';
import { rawRows } from '../db';
import { LOG_TABLES } from './log-tables';

/**
 * Months created ahead of the current one: a row is refused when no partition holds its month (there is no
 * DEFAULT partition), so the daily schedule keeps this lead and a missed run or two costs nothing.
 */
export const LOG_PARTITION_MONTHS_AHEAD = 3;

/** The first day of `date`'s month, UTC, as `YYYY-MM-DD`. */
const monthOf = (date: Date) => `${date.toISOString().slice(0, 7)}-01`;

/**
 * Creates every missing month partition of a log type's table from `from`'s month to `to`'s (both
 * included); answers how many it created. Safe to repeat and to run beside itself (each month is created
 * once: a second creator finds it there).
 */
export async function ensureLogPartitions(db: Knex, args: { logType: LogType; from: Date; to: Date }): Promise<number> {
  const [row] = await rawRows<{ created: number }>(db, 'select settings.ensure_log_partitions(?::regclass, ?::date, ?::date) as created', [
    LOG_TABLES[args.logType],
    monthOf(args.from),
    monthOf(args.to),
  ]);
  return row.created;
}

/** The current month's partition and LOG_PARTITION_MONTHS_AHEAD more, created when missing. */
export async function createLogPartitionsAhead(db: Knex, args: { logType: LogType; now?: Date }): Promise<number> {
  const now = args.now ?? new Date();
  const last = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + LOG_PARTITION_MONTHS_AHEAD, 1));
  return ensureLogPartitions(db, { logType: args.logType, from: now, to: last });
}

export interface LogPartition {
  name: string;
  /** The first instant of its month, and the first of the next. */
  from: Date;
  to: Date;
}

/** A log type's month partitions, oldest first, read from the catalogue's partition bounds. */
export async function listLogPartitions(db: Knex, logType: LogType): Promise<LogPartition[]> {
  const rows = await rawRows<{ name: string; from: Date; to: Date }>(
    db,
    `select name, bound[1]::timestamptz as "from", bound[2]::timestamptz as "to"
     from (
       select format('%I.%I', n.nspname, c.relname) as name,
              regexp_match(pg_get_expr(c.relpartbound, c.oid), $$FROM \\('([^']+)'\\) TO \\('([^']+)'\\)$$) as bound
       from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_namespace n on n.oid = c.relnamespace
       where i.inhparent = ?::regclass
     ) partitions`,
    [LOG_TABLES[logType]],
  );
  return rows.sort((a, b) => a.from.getTime() - b.from.getTime());
}
