import { Knex } from 'knex';

/**
 * The three log tables become partitioned by month on `created_at` (native range partitioning), so that a
 * month past every site's retention is archived and dropped whole instead of deleted row by row.
 *
 * - Each month is a partition `{table}_p{YYYYMM}`, from the first of the month (UTC) to the next. There is
 *   no DEFAULT partition: one would forbid `DETACH … CONCURRENTLY` (hookdeck/outpost#1027), and a row of a
 *   month no partition holds is refused, never parked. Months are created ahead by
 *   `settings.ensure_log_partitions`, which the daily archive schedule and each archival worker's start run.
 * - A unique key of a partitioned table must hold the partition key: the primary key is `(id, created_at)`.
 *   An email batch's key is `(batch_id, recipient, created_at)`, and its writer gives every row of a batch the
 *   batch's `created_at`, so it holds as before. The job key cannot: its writers take turns on a lock of it.
 * - Rows move across in the migration's transaction with the ids they had, and the new identity goes on
 *   from where the old one stood: an archived row's id is never handed out again.
 */
const TABLES = ['settings.scheduler_job_log', 'email.email_log', 'integration.integration_log'];

/** Creates every missing month partition of `parent` from `from_month` to `to_month` (both included); answers how many it created. */
const ENSURE_FUNCTION = `
  create or replace function settings.ensure_log_partitions(parent regclass, from_month date, to_month date) returns integer
  -- Behind a lock held long (another DDL), the caller fails and tries again rather than wait unbounded; the
  -- setting holds inside the function only.
  language plpgsql set lock_timeout = '10s' as $$
  declare
    parent_schema text;
    parent_name text;
    month date := date_trunc('month', from_month)::date;
    created integer := 0;
    partition_name text;
  begin
    select n.nspname, c.relname into parent_schema, parent_name
      from pg_class c join pg_namespace n on n.oid = c.relnamespace where c.oid = parent;
    while month <= to_month loop
      partition_name := parent_name || '_p' || to_char(month, 'YYYYMM');
      if to_regclass(format('%I.%I', parent_schema, partition_name)) is null then
        begin
          -- Made apart, then attached: CREATE TABLE … PARTITION OF would lock the whole log against writes
          -- (and wait behind any open transaction that wrote to it); ATTACH takes a lock writers do not meet.
          execute format(
            'create table %I.%I (like %I.%I including defaults including constraints including storage)',
            parent_schema, partition_name, parent_schema, parent_name
          );
          execute format(
            'alter table %I.%I attach partition %I.%I for values from (%L) to (%L)',
            parent_schema, parent_name, parent_schema, partition_name,
            month::timestamp at time zone 'UTC', (month + interval '1 month')::timestamp at time zone 'UTC'
          );
          created := created + 1;
        exception when duplicate_table or unique_violation then
          -- Created meanwhile by another caller: there, as wanted.
          null;
        end;
      elsif not exists (
        select 1 from pg_inherits
        where inhrelid = to_regclass(format('%I.%I', parent_schema, partition_name)) and inhparent = parent
      ) then
        -- A table of the month's name that holds none of the log's rows (detached, say): the month's writes
        -- would be refused while this reported it there.
        raise exception '%.% exists but is not a partition of %', parent_schema, partition_name, parent::text;
      end if;
      month := (month + interval '1 month')::date;
    end loop;
    return created;
  end $$;
`;

/** Months created ahead of the current one at migration (the daily schedule keeps the same lead). */
const MONTHS_AHEAD = 3;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(ENSURE_FUNCTION);
  for (const table of TABLES) await partition(knex, table);

  await knex.raw(`
    create index scheduler_job_log_job_key_idx on settings.scheduler_job_log (job_key) where job_key is not null;
    create index scheduler_job_log_site_created_idx on settings.scheduler_job_log (site_id, created_at, id);
    create index scheduler_job_log_job_created_idx on settings.scheduler_job_log (job_name, created_at desc, id desc);

    create index email_log_site_created_idx on email.email_log (site_id, created_at, id);
    create index email_log_template_idx on email.email_log (template_id, created_at desc, id desc);
    create unique index email_log_batch_recipient_key on email.email_log (batch_id, recipient, created_at) where batch_id is not null;
    create index email_log_batch_idx on email.email_log (batch_id, id) where batch_id is not null;
    create index email_log_requested_by_idx on email.email_log (requested_by, created_at);
    create trigger email_log_status_changed after update on email.email_log
      referencing old table as rows_before new table as changed_rows
      for each statement execute function email.note_status_changes();

    create index integration_log_site_created_idx on integration.integration_log (site_id, created_at, id);
  `);
}

/** A statement's rows (migrations read little; the shape is the caller's word). */
async function rowsOf<Row>(knex: Knex, sql: string, bindings: Knex.RawBinding[] = []): Promise<Row[]> {
  const result = (await knex.raw(sql, bindings)) as { rows: Row[] };
  return result.rows;
}

/** Renames `table` aside, creates it again partitioned, moves its rows across and drops the old one. */
async function partition(knex: Knex, table: string): Promise<void> {
  const [schema, name] = table.split('.');
  const old = `${name}_unpartitioned`;
  await knex.raw(`alter table ${table} rename to ${old}`);
  // The old table's index and constraint names are taken for the new table's own.
  const indexes = await rowsOf<{ indexname: string }>(knex, `select indexname from pg_indexes where schemaname = ? and tablename = ?`, [schema, old]);
  for (const { indexname } of indexes) {
    await knex.raw(`alter index ??.?? rename to ??`, [schema, indexname, `${indexname}_unpartitioned`.slice(0, 63)]);
  }
  await knex.raw(`drop trigger if exists email_log_status_changed on ${schema}.${old}`);
  await knex.raw(
    `create table ${table} (like ${schema}.${old} including defaults including constraints including identity including generated including storage including comments)
     partition by range (created_at)`,
  );
  await knex.raw(`alter table ${table} add primary key (id, created_at)`);
  const [span] = await rowsOf<{ first: Date; last: Date }>(
    knex,
    `select coalesce(min(created_at), now()) as first, greatest(coalesce(max(created_at), now()), now()) as last from ${schema}.${old}`,
  );
  await knex.raw(
    `select settings.ensure_log_partitions(?::regclass, (?::timestamptz at time zone 'UTC')::date, ((?::timestamptz at time zone 'UTC') + ?::interval)::date)`,
    [table, span.first, span.last, `${MONTHS_AHEAD} months`],
  );
  await knex.raw(`insert into ${table} overriding system value select * from ${schema}.${old}`);
  // The identity goes on from the old one's last value (ids of rows archived since are not handed out again).
  const [sequences] = await rowsOf<{ old_sequence: string; new_sequence: string }>(
    knex,
    `select pg_get_serial_sequence(?, 'id') as old_sequence, pg_get_serial_sequence(?, 'id') as new_sequence`,
    [`${schema}.${old}`, table],
  );
  const [stood] = await rowsOf<{ last_value: string; is_called: boolean }>(knex, `select last_value, is_called from ${sequences.old_sequence}`);
  await knex.raw(`select setval(?, ?, ?)`, [sequences.new_sequence, stood.last_value, stood.is_called]);
  await knex.raw(`drop table ${schema}.${old}`);
  // The new identity was named beside the old one's (`…_id_seq1`): it takes the usual name back.
  await knex.raw(`alter sequence ${sequences.new_sequence} rename to ${name}_id_seq`);
  // Autovacuum analyzes partitions, never a partitioned table: the planner's figures for the whole come from here.
  await knex.raw(`analyze ${table}`);
}

export async function down(): Promise<void> {
  // Going back would copy every row into one table again: done by restoring a backup taken before, not here.
  throw new Error('029-partitioned-log-tables cannot be undone in place: restore the backup taken before it');
}
