import { Knex } from 'knex';

/**
 * Channel configurations: one table per channel, at most one active each, passwords stored
 * only as AES-256-GCM ciphertext. Bulk sends key their log rows by (batch, recipient), so a repeated batch
 * step never writes a second row for anyone.
 */
const CHANNEL_COLUMNS = `
  id uuid primary key default gen_random_uuid(),
  config_name text not null unique,
  is_active boolean not null default false,
  service_url text,
  sample_request text,
  service_username text,
  service_password text,
  soap_method_name text,
  rest_method_type text check (rest_method_type in ('POST', 'PUT', 'PATCH', 'GET')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    create table settings.email_configuration (
      ${CHANNEL_COLUMNS},
      transport text not null check (transport in ('SMTP', 'SOAP', 'REST')),
      smtp_host text,
      smtp_port integer,
      smtp_username text,
      smtp_password text,
      smtp_use_ssl boolean not null default false,
      smtp_use_tls boolean not null default false
    );
    create unique index email_configuration_one_active on settings.email_configuration (is_active) where is_active;

    create table settings.sms_configuration (
      ${CHANNEL_COLUMNS},
      transport text not null check (transport in ('SOAP', 'REST'))
    );
    create unique index sms_configuration_one_active on settings.sms_configuration (is_active) where is_active;

    create unique index email_log_batch_recipient_key on email.email_log (batch_id, recipient) where batch_id is not null;
    create index email_log_batch_idx on email.email_log (batch_id, id) where batch_id is not null;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    drop index if exists email.email_log_batch_idx;
    drop index if exists email.email_log_batch_recipient_key;
    drop table if exists settings.sms_configuration;
    drop table if exists settings.email_configuration;
  `);
}
