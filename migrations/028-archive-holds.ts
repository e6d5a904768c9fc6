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

    -- A held file's row is neither deleted nor moved out of the hold's reach (another site or folder, other
    -- bytes) to be deleted after; a truncate of the table is refused while any hold is open.
    create function settings.refuse_held_archive_delete() returns trigger language plpgsql as $$
    begin
      if tg_op = 'TRUNCATE' then
        if exists (select 1 from settings.archive_hold where released_at is null) then
          raise exception 'archive files are under legal hold' using errcode = 'OFH01';
        end if;
        return null;
      end if;
      if (old.folder = '/archive' or old.folder like '/archive/%') and exists (
        select 1 from settings.archive_hold hold
        where hold.released_at is null and (hold.asset_id = old.id or hold.site_id = old.site_id)
      ) and (tg_op = 'DELETE' or new.id <> old.id or new.site_id <> old.site_id or new.folder <> old.folder
             or new.storage_key <> old.storage_key or new.sha256 <> old.sha256) then
        raise exception 'archive file % is under legal hold', old.id using errcode = 'OFH01';
      end if;
      if tg_op = 'DELETE' then
        return old;
      end if;
      return new;
    end $$;
    create trigger refuse_held_archive_delete before delete or update on assets.asset
      for each row execute function settings.refuse_held_archive_delete();
    create trigger refuse_held_archive_truncate before truncate on assets.asset
      for each statement execute function settings.refuse_held_archive_delete();

    create function settings.keep_hold_records() returns trigger language plpgsql as $$
    begin
      raise exception 'legal holds and their refusals are records: never deleted' using errcode = 'OFH02';
    end $$;
    create function settings.keep_archive_holds() returns trigger language plpgsql as $$
    begin
      if old.released_at is not null or new.id <> old.id or new.asset_id is distinct from old.asset_id
         or new.site_id is distinct from old.site_id or new.reason <> old.reason or new.held_by <> old.held_by
         or new.held_by_name is distinct from old.held_by_name or new.held_at <> old.held_at then
        raise exception 'a legal hold changes only once, when it is released' using errcode = 'OFH02';
      end if;
      return new;
    end $$;
    create trigger keep_archive_holds before update on settings.archive_hold
      for each row execute function settings.keep_archive_holds();
    create trigger keep_hold_records before delete on settings.archive_hold
      for each row execute function settings.keep_hold_records();
    create trigger keep_hold_records before update or delete on settings.archive_hold_refusal
      for each row execute function settings.keep_hold_records();
    create trigger keep_hold_records_truncate before truncate on settings.archive_hold
      for each statement execute function settings.keep_hold_records();
    create trigger keep_refusals_truncate before truncate on settings.archive_hold_refusal
      for each statement execute function settings.keep_hold_records();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger if exists refuse_held_archive_delete on assets.asset;
    drop trigger if exists refuse_held_archive_truncate on assets.asset;
    drop function if exists settings.refuse_held_archive_delete();
    drop table if exists settings.archive_hold_refusal;
    drop table if exists settings.archive_hold;
    drop function if exists settings.keep_archive_holds();
    drop function if exists settings.keep_hold_records();
  `);
}
