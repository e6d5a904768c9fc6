import { Knex } from 'knex';

/**
 * A part's exact ids move from one manifest row per archived row (`archive_part_row`) to one sorted array
 * per part (`archive_part_ids`): recording and removing a million index entries per million rows cost more
 * than the export itself. Parts still unfinished keep their ids.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table settings.archive_part_ids (
      part_id uuid primary key references settings.archive_part (id) on delete cascade,
      ids bigint[] not null
    );
    insert into settings.archive_part_ids (part_id, ids)
      select part_id, array_agg(row_id order by row_id) from settings.archive_part_row group by part_id;
    drop table settings.archive_part_row;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    create table settings.archive_part_row (
      part_id uuid not null references settings.archive_part (id) on delete cascade,
      row_id bigint not null,
      primary key (part_id, row_id)
    );
    insert into settings.archive_part_row (part_id, row_id)
      select part_id, unnest(ids) from settings.archive_part_ids;
    drop table settings.archive_part_ids;
  `);
}
