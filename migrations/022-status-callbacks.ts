import { Knex } from 'knex';

/**
 * Status callbacks (third wave): a site may name a URL that hears of every change of its messages' delivery
 * status, signed with a secret of its own (encrypted at rest like the channels' passwords). Every change is
 * written to an outbox by the database itself, in the statement that makes it, whoever makes it (a send, a
 * bounce report, a retry from the API, an operator's SQL), so none can be missed; a dispatcher delivers the
 * outbox with backoff. A site with no callback adds nothing to the outbox.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table settings.status_callback (
      site_id text primary key,
      url text not null,
      secret text not null,
      updated_at timestamptz not null default now(),
      updated_by text
    );

    create table email.status_event (
      id bigserial primary key,
      -- Sent with every try of this event: a receiver that sees one twice knows it.
      event_id uuid not null unique default gen_random_uuid(),
      site_id text not null,
      log_id bigint not null,
      status text not null,
      previous_status text,
      occurred_at timestamptz not null default now(),
      attempts integer not null default 0,
      next_at timestamptz not null default now(),
      delivered_at timestamptz,
      given_up_at timestamptz,
      last_error text
    );
    create index status_event_due on email.status_event (next_at) where delivered_at is null and given_up_at is null;
    create index status_event_log on email.status_event (log_id, id);

    -- Once per statement, from its transition tables: a bulk send's slice of rows is one insert, not one per row.
    create function email.note_status_changes() returns trigger language plpgsql as $$
    begin
      -- No site has a callback (the usual case): nothing to note, and no join of the statement's rows.
      if not exists (select 1 from settings.status_callback) then
        return null;
      end if;
      insert into email.status_event (site_id, log_id, status, previous_status)
        select changed.site_id, changed.id, changed.delivery_status, before.delivery_status
        from changed_rows changed join rows_before before on before.id = changed.id
        where changed.delivery_status is distinct from before.delivery_status
          and exists (select 1 from settings.status_callback callback where callback.site_id = changed.site_id)
        order by changed.id;
      if found then
        perform pg_notify('opsflow_status_event', '');
      end if;
      return null;
    end $$;
    create trigger email_log_status_changed after update on email.email_log
      referencing old table as rows_before new table as changed_rows
      for each statement execute function email.note_status_changes();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop trigger if exists email_log_status_changed on email.email_log;
    drop function if exists email.note_status_changes();
    drop table if exists email.status_event;
    drop table if exists settings.status_callback;
  `);
}
