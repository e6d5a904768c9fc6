import { Knex } from 'knex';

/**
 * Legal holds on archive files: on one file, or on every archive file of a site (those to come included).
 * A hold is set and released by an ADMIN, each with a reason; both stay on its row for good, and so does
 * every deletion a hold refused. The database refuses the deletion of a held archive file's row itself, for
 * any caller that skips the API (a raw statement, a site's cascade): the platform keeps the rule, not the
 * store that holds the bytes. A hold's row is never deleted, and a released one never changes again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table settings.archive_hold (
      id uuid primary key default gen_random_uuid(),
      asset_id uuid,
      site_id text,
      reason text not null check (length(reason) between 1 and 1000),
      held_by text not null,
      held_by_name text,
      held_at timestamptz not null default now(),
      released_by text,
      released_by_name text,
      release_reason text,
      released_at timestamptz,
      check ((asset_id is null) <> (site_id is null)),
      check ((released_at is null) = (released_by is null) and (released_at is null) = (release_reason is null))
    );
    create index archive_hold_asset_idx on settings.archive_hold (asset_id) where released_at is null;
    create index archive_hold_site_idx on settings.archive_hold (site_id) where released_at is null;
    create index archive_hold_list_idx on settings.archive_hold (held_at, id);

    create table settings.archive_hold_refusal (
      id uuid primary key default gen_random_uuid(),
      hold_id uuid not null references settings.archive_hold (id),
      asset_id uuid not null,
      site_id text not null,
      file_name text not null,
      refused_by text not null,
      refused_by_name text,
      refused_at timestamptz not null default now()
    );
    create index archive_hold_refusal_hold_idx on settings.archive_hold_refusal (hold_id, refused_at desc);

    create function settings.refuse_held_archive_delete() returns trigger language plpgsql as $$
    begin
      if (old.folder = '/archive' or old.folder like '/archive/%') and exists (
        select 1 from settings.archive_hold hold
        where hold.released_at is null and (hold.asset_id = old.id or hold.site_id = old.site_id)
      ) then
        raise exception 'archive file % is under legal hold', old.id using errcode = 'OFH01';
      end if;
      return old;
    end $$;
    create trigger refuse_held_archive_delete before delete on assets.asset
      for each row execute function settings.refuse_held_archive_delete();

    create function settings.keep_archive_holds() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        raise exception 'a legal hold is a record: it is released, never deleted' using errcode = 'OFH02';
      end if;
      if old.released_at is not null or new.asset_id is distinct from old.asset_id or new.site_id is distinct from old.site_id
         or new.reason <> old.reason or new.held_by <> old.held_by or new.held_at <> old.held_at then
        raise exception 'a legal hold changes only once, when it is released' using errcode = 'OFH02';
      end if;
      return new;
    end $$;
    create trigger keep_archive_holds before update or delete on settings.archive_hold
      for each row execute function settings.keep_archive_holds();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger if exists refuse_held_archive_delete on assets.asset;
    drop function if exists settings.refuse_held_archive_delete();
    drop table if exists settings.archive_hold_refusal;
    drop table if exists settings.archive_hold;
    drop function if exists settings.keep_archive_holds();
  `);
}
