import { Knex } from 'knex';

/**
 * The late-row ledger of partition-drop archival. When a month's archive opens, a trigger on the month notes
 * every row written to it from then on (its id, site and writing transaction); each site's export records
 * the snapshot it read. At the drop, a row is late exactly when its writer is not visible to its site's
 * export snapshot, so the drop finds the rows to put back from the ledger (a handful) instead of joining
 * the month's every row with the ids its parts hold. `stray_check` says which way a drop judged its rows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table settings.archive_partition_late_row (
      partition_archive_id uuid not null references settings.archive_partition (id),
      row_id bigint not null,
      site_id text not null,
      xid xid8 not null,
      noted_at timestamptz not null default now()
    );
    create index archive_partition_late_row_idx on settings.archive_partition_late_row (partition_archive_id);

    -- Security definer: whoever writes the log row notes it, without a grant on the ledger.
    create function settings.note_archive_late_row() returns trigger
      language plpgsql security definer set search_path = pg_catalog as $$
    begin
      insert into settings.archive_partition_late_row (partition_archive_id, row_id, site_id, xid)
      values (tg_argv[0]::uuid, new.id, new.site_id, pg_current_xact_id());
      return null;
    end $$;

    alter table settings.archive_partition add column late_rows_noted boolean not null default false;
    alter table settings.archive_partition add column stray_check text check (stray_check in ('ledger', 'ids'));
    alter table settings.archive_part add column export_snapshot pg_snapshot;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    alter table settings.archive_part drop column export_snapshot;
    alter table settings.archive_partition drop column stray_check;
    alter table settings.archive_partition drop column late_rows_noted;
    drop function settings.note_archive_late_row() cascade;
    drop table settings.archive_partition_late_row;
  `);
}
