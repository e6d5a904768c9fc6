import knex, { Knex } from 'knex';
import pg from 'pg';
import { migrations } from '../../migrations';
import { sharedPostgresAdminUrl } from '../support/platform';
import { createLogPartitionsAhead, ensureLogPartitions, listLogPartitions, LOG_PARTITION_MONTHS_AHEAD } from '../../data/archival/log-partitions';
import { writeJobLog } from '../../data/scheduler-job-log';
import { LOG_TABLES } from '../../data/archival/log-tables';
import { LOG_TYPES } from '../../domain/archival';

/**
 * The log tables partitioned by month (spec: archival, third wave): migration 029 moves a table of 1,000,000
 * rows across with nothing lost and nothing changed, the identity goes on past every id handed out before, no
 * DEFAULT partition exists, and the keys that make writes idempotent still hold.
 */
const ROWS = 1_000_000;
const DATABASE = `opsflow_partitioning_${process.pid}`;
let admin: pg.Client;
let db: Knex;

const sourceUpTo = (count: number): Knex.MigrationSource<(typeof migrations)[number]> => ({
  getMigrations: async () => migrations.slice(0, count),
  getMigrationName: (migration) => migration.name,
  getMigration: async (migration) => migration,
});
const BEFORE_PARTITIONING = migrations.findIndex((migration) => migration.name === '029-partitioned-log-tables');

/** Every row of a table, as text, folded into a count and an order-free checksum. */
async function fingerprint(table: string): Promise<{ rows: string; checksum: string }> {
  const { rows } = await db.raw(
    `select count(*)::text as rows, sum(('x' || substr(md5(t::text), 1, 15))::bit(60)::bigint::numeric)::text as checksum from ${table} t`,
  );
  return rows[0];
}

beforeAll(async () => {
  admin = new pg.Client({ connectionString: sharedPostgresAdminUrl() });
  await admin.connect();
  await admin.query(`drop database if exists ${DATABASE}`);
  await admin.query(`create database ${DATABASE}`);
  const url = new URL(sharedPostgresAdminUrl());
  url.pathname = `/${DATABASE}`;
  db = knex({ client: 'pg', connection: url.toString(), pool: { min: 0, max: 4 } });
  await db.migrate.latest({ migrationSource: sourceUpTo(BEFORE_PARTITIONING), tableName: 'knex_migrations' });
}, 120000);

afterAll(async () => {
  await db?.destroy();
  await admin?.query(`drop database if exists ${DATABASE}`);
  await admin?.end();
});

test('1,000,000 email-log rows over fourteen months move into month partitions: every row the same, ids kept, the identity goes on, no DEFAULT partition', async () => {
  // Fourteen months back from now, NULLs, Arabic text, time zones and JSON; then the newest ids deleted, as an
  // archive run leaves them: the new identity must not hand them out again.
  await db.raw(
    `insert into email.email_log (site_id, created_at, updated_at, recipient, locale, subject, status, attempts, error, variables, batch_id)
     select 'site-' || (g % 7), now() - (g * interval '36 seconds') - interval '3 hours',
            timestamptz '2025-06-01 12:00:00.123456+03' + g * interval '1 millisecond',
            'user' || g || '@example.test', case when g % 3 = 0 then 'ar' when g % 3 = 1 then 'en' end,
            case when g % 5 = 0 then null else 'تقرير شهري "quoted", #' || g end,
            'SUCCESS', 1, case when g % 11 = 0 then '' end,
            case when g % 2 = 0 then jsonb_build_object('n', g, 'name', 'مستخدم ' || g) end,
            case when g % 1000 = 0 then gen_random_uuid() end
     from generate_series(1, ?::int) g`,
    [ROWS],
  );
  await db.raw(
    `insert into integration.integration_log (site_id, created_at, component, url, method, outcome) select 'site-1', now() - g * interval '1 hour', 'sms', 'https://peer.example.test/', 'POST', 'SUCCESS' from generate_series(1, 5000) g`,
  );
  await db.raw(
    `insert into settings.scheduler_job_log (site_id, created_at, job_name, job_key, status, started_at) select 'site-1', now() - g * interval '1 day', 'archive', 'key-' || g, 'SUCCESS', now() from generate_series(1, 400) g`,
  );
  const { rows: newest } = await db.raw(`select max(id)::int as id from email.email_log`);
  await db.raw(`delete from email.email_log where id > ?`, [newest[0].id - 10]);
  const before = Object.fromEntries(await Promise.all(Object.values(LOG_TABLES).map(async (table) => [table, await fingerprint(table)] as const)));
  expect(before['email.email_log'].rows).toBe(String(ROWS - 10));

  await db.migrate.latest({ migrationSource: sourceUpTo(migrations.length), tableName: 'knex_migrations' });

  for (const table of Object.values(LOG_TABLES)) {
    expect({ table, ...(await fingerprint(table)) }).toEqual({ table, ...before[table] });
    const { rows } = await db.raw(`select c.relkind from pg_class c where c.oid = ?::regclass`, [table]);
    expect(rows[0].relkind).toBe('p');
  }
  const { rows: defaults } = await db.raw(
    `select i.inhrelid::regclass::text as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
     where i.inhparent = any(?::regclass[]) and pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT'`,
    [Object.values(LOG_TABLES)],
  );
  expect(defaults).toEqual([]);

  // Month partitions from the oldest row's month to LOG_PARTITION_MONTHS_AHEAD months after this one, contiguous.
  const partitions = await listLogPartitions(db, 'EMAIL_LOG');
  const { rows: oldest } = await db.raw(`select date_trunc('month', min(created_at), 'UTC') as month from email.email_log`);
  expect(partitions[0].from.getTime()).toBe(new Date(oldest[0].month).getTime());
  const now = new Date();
  expect(partitions[partitions.length - 1].from.getTime()).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + LOG_PARTITION_MONTHS_AHEAD, 1));
  for (let i = 1; i < partitions.length; i++) expect(partitions[i].from.getTime()).toBe(partitions[i - 1].to.getTime());

  // The identity goes on past the deleted ids, under its usual name.
  const { rows: identity } = await db.raw(`select pg_get_serial_sequence('email.email_log', 'id') as name`);
  expect(identity[0].name).toBe('email.email_log_id_seq');
  const { rows: next } = await db.raw(
    `insert into email.email_log (site_id, recipient, status) values ('site-new', 'new@example.test', 'PENDING') returning id`,
  );
  expect(Number(next[0].id)).toBe(newest[0].id + 1);
});

test('a row of a month no partition holds is refused, not parked; the months ahead and a past month are created on asking, once', async () => {
  const farAhead = new Date(Date.UTC(new Date().getUTCFullYear() + 2, 0, 15));
  await expect(
    db.raw(
      `insert into integration.integration_log (site_id, created_at, component, url, method, outcome) values ('site-1', ?, 'sms', 'https://x.test/', 'GET', 'SUCCESS')`,
      [farAhead],
    ),
  ).rejects.toThrow(/no partition of relation/);

  for (const logType of LOG_TYPES) expect(await createLogPartitionsAhead(db, { logType })).toBe(0);
  const past = new Date('2019-03-10T00:00:00Z');
  expect(await ensureLogPartitions(db, { logType: 'INTEGRATION_LOG', from: past, to: past })).toBe(1);
  expect(await ensureLogPartitions(db, { logType: 'INTEGRATION_LOG', from: past, to: past })).toBe(0);
  await db.raw(
    `insert into integration.integration_log (site_id, created_at, component, url, method, outcome) values ('site-1', ?, 'sms', 'https://x.test/', 'GET', 'SUCCESS')`,
    [past],
  );
  // A table of a month's name that is not the log's partition (detached) is not taken for the month.
  await db.raw(`alter table integration.integration_log detach partition integration.integration_log_p201903`);
  await expect(ensureLogPartitions(db, { logType: 'INTEGRATION_LOG', from: past, to: past })).rejects.toThrow(/is not a partition of/);
  // Two callers at once: each month created once, neither fails.
  const results = await Promise.all(
    [1, 2].map(() => ensureLogPartitions(db, { logType: 'EMAIL_LOG', from: new Date('2018-01-01T00:00:00Z'), to: new Date('2018-06-01T00:00:00Z') })),
  );
  expect(results[0] + results[1]).toBe(6);
});

test("the keys that make writes idempotent hold on the partitioned tables: a batch's recipient once, a job key's row once", async () => {
  const batchId = '6f1de3a4-5d0c-4a35-9c59-2f5a3f2d7a10';
  await db.raw(`insert into email.email_batch (batch_id, site_id, variables) values (?, 'site-1', '{}')`, [batchId]);
  const insertBatchRow = () =>
    db.raw(
      `insert into email.email_log (site_id, batch_id, recipient, status, created_at)
       values ('site-1', ?, 'one@example.test', 'PENDING', (select created_at from email.email_batch where batch_id = ?))
       on conflict (batch_id, recipient, created_at) where batch_id is not null do nothing`,
      [batchId, batchId],
    );
  await insertBatchRow();
  await insertBatchRow();
  const countOf = async (query: Knex.QueryBuilder) => Number(((await query.count({ count: '*' }).first()) as { count: string | number }).count);
  expect(await countOf(db('email.email_log').where({ batch_id: batchId }))).toBe(1);

  const entry = {
    siteId: 'site-1',
    jobName: 'archive',
    jobKey: 'job-once',
    status: 'SUCCESS' as const,
    startedAt: new Date(),
    finishedAt: new Date(),
    rowsAffected: 1,
    message: null,
  };
  await Promise.all([writeJobLog(db, entry), writeJobLog(db, entry), writeJobLog(db, entry)]);
  expect(await countOf(db('settings.scheduler_job_log').where({ job_key: 'job-once' }))).toBe(1);
});

test('a month is created beside a transaction that wrote to the log and stays open: neither waits for the other', async () => {
  const url = new URL(sharedPostgresAdminUrl());
  url.pathname = `/${DATABASE}`;
  const open = new pg.Client({ connectionString: url.toString() });
  await open.connect();
  try {
    await open.query('begin');
    await open.query(`insert into email.email_log (site_id, recipient, status) values ('site-open', 'open@example.test', 'PENDING')`);
    // Had it taken the table's exclusive lock, it would wait for the open transaction and fail at its lock timeout.
    const month = new Date('2017-05-01T00:00:00Z');
    expect(await ensureLogPartitions(db, { logType: 'EMAIL_LOG', from: month, to: month })).toBe(1);
    await open.query(`insert into email.email_log (site_id, created_at, recipient, status) values ('site-open', $1, 'may@example.test', 'PENDING')`, [month]);
    await open.query('commit');
  } finally {
    await open.end();
  }
  expect(Number((await db('email.email_log').where({ site_id: 'site-open' }).count({ count: '*' }).first())?.count)).toBe(2);
});
