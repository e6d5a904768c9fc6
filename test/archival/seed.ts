import pg from 'pg';
import { Db } from '../../data/db';
import { ensureLogPartitions } from '../../data/archival/log-partitions';

const DAY_MS = 24 * 60 * 60 * 1000;

export const daysAgo = (days: number, extraMs = 0) => new Date(Date.now() - days * DAY_MS - extraMs);

/** Inserts email log rows for a site, `ageDays` old; returns their ids in insertion order. */
export async function seedEmailLogs(db: Db, args: { siteId: string; count: number; ageDays: number; recipient?: string }): Promise<number[]> {
  const rows = Array.from({ length: args.count }, (_, i) => ({
    site_id: args.siteId,
    created_at: daysAgo(args.ageDays, i * 1000),
    updated_at: daysAgo(args.ageDays, i * 1000),
    recipient: args.recipient ?? `r${i}@example.test`,
    status: 'SUCCESS',
    attempts: 1,
    subject: `subject ${i}`,
  }));
  // Past months have no partition of their own until someone asks: rows of a month without one are refused.
  await ensureLogPartitions(db, { logType: 'EMAIL_LOG', from: rows[rows.length - 1]?.created_at ?? new Date(), to: new Date() });
  const inserted = await db('email.email_log').insert(rows).returning('id');
  return inserted.map((row: { id: number }) => Number(row.id));
}

/**
 * Inserts `count` email log rows for a site, 60 days old, in one statement on the database itself (a knex
 * insert is held to 65,535 bind parameters); answers their ids in order.
 */
export async function seedManyEmailLogs(db: Db, args: { databaseUrl: string; siteId: string; count: number }): Promise<number[]> {
  await ensureLogPartitions(db, { logType: 'EMAIL_LOG', from: daysAgo(61 + Math.ceil(args.count / 86400)), to: new Date() });
  const client = new pg.Client({ connectionString: args.databaseUrl });
  await client.connect();
  try {
    await client.query(
      `insert into email.email_log (site_id, created_at, updated_at, recipient, status, attempts, subject)
       select $1, now() - interval '60 days' - g * interval '1 second', now() - interval '60 days', 'r' || g || '@example.test', 'SUCCESS', 1, 'subject ' || g
       from generate_series(1, $2) g`,
      [args.siteId, args.count],
    );
  } finally {
    await client.end();
  }
  return remainingIds(db, args.siteId);
}

export async function remainingIds(db: Db, siteId: string): Promise<number[]> {
  const rows = await db('email.email_log').where({ site_id: siteId }).orderBy('id').select('id');
  return rows.map((row: { id: number }) => Number(row.id));
}

/** The ids in a downloaded archive CSV (the first column). */
export function csvIds(csv: string): number[] {
  return csv
    .split('\n')
    .slice(1)
    .filter((line) => /^\d+,/.test(line))
    .map((line) => Number(line.split(',')[0]));
}
