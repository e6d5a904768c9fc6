import { Knex } from 'knex';
import { decryptSecret, encryptSecret } from '../../lib/secrets';
import { uniqueOr409 } from '../db-errors';

export type Channel = 'EMAIL' | 'SMS';
export type Transport = 'SMTP' | 'SOAP' | 'REST';

export const CONFIG_TABLES: Record<Channel, string> = { EMAIL: 'settings.email_configuration', SMS: 'settings.sms_configuration' };

export interface ChannelConfigRow {
  id: string;
  config_name: string;
  transport: Transport;
  is_active: boolean;
  smtp_host?: string | null;
  smtp_port?: number | null;
  smtp_username?: string | null;
  smtp_password?: string | null;
  smtp_use_ssl?: boolean;
  smtp_use_tls?: boolean;
  service_url: string | null;
  sample_request: string | null;
  service_username: string | null;
  service_password: string | null;
  soap_method_name: string | null;
  rest_method_type: 'POST' | 'PUT' | 'PATCH' | 'GET' | null;
  created_at: Date;
  updated_at: Date;
}

/** A configuration's columns as written: passwords already encrypted; a password left undefined keeps the stored one. */
export type ConfigColumns = Partial<Omit<ChannelConfigRow, 'id' | 'created_at' | 'updated_at'>>;

/** Encrypts the passwords among `columns`; undefined stays undefined (kept), null clears. */
export function sealPasswords(columns: ConfigColumns, secretsKey: string): ConfigColumns {
  const sealed = { ...columns };
  for (const key of ['smtp_password', 'service_password'] as const) {
    const value = columns[key];
    if (typeof value === 'string' && value !== '') sealed[key] = encryptSecret(value, secretsKey);
    else if (value === '') sealed[key] = null;
  }
  return sealed;
}

/** The plain passwords of a configuration, for a transport about to use them; a tampered one throws. */
export function openPasswords(row: ChannelConfigRow, secretsKey: string): { smtpPassword: string | null; servicePassword: string | null } {
  return {
    smtpPassword: row.smtp_password ? decryptSecret(row.smtp_password, secretsKey) : null,
    servicePassword: row.service_password ? decryptSecret(row.service_password, secretsKey) : null,
  };
}

export async function findConfig(db: Knex, channel: Channel, id: string): Promise<ChannelConfigRow | undefined> {
  return db<ChannelConfigRow>(CONFIG_TABLES[channel]).where({ id }).first();
}

export async function activeConfig(db: Knex, channel: Channel): Promise<ChannelConfigRow | undefined> {
  return db<ChannelConfigRow>(CONFIG_TABLES[channel]).where({ is_active: true }).first();
}

/** Activates one configuration of the channel and deactivates the others, in one transaction. */
export async function activateConfig(db: Knex, channel: Channel, id: string): Promise<ChannelConfigRow> {
  return db.transaction(async (trx) => {
    await trx(CONFIG_TABLES[channel]).where({ is_active: true }).whereNot({ id }).update({ is_active: false, updated_at: trx.fn.now() });
    const [row] = (await trx(CONFIG_TABLES[channel]).where({ id }).update({ is_active: true, updated_at: trx.fn.now() }).returning('*')) as ChannelConfigRow[];
    return row;
  });
}

/** A channel's configurations, newest first (a handful: not paged). */
export async function listConfigs(db: Knex, channel: Channel): Promise<ChannelConfigRow[]> {
  return db(CONFIG_TABLES[channel]).orderBy('created_at', 'desc');
}

const nameTaken = 'Another configuration has that name.';

/** Saves new or changed (`id`) columns, then activates it when asked; 409 CONFIG_NAME_TAKEN for a name in use. */
export async function saveConfig(db: Knex, args: { channel: Channel; id?: string; columns: ConfigColumns; activate: boolean | undefined }): Promise<ChannelConfigRow> {
  const table = CONFIG_TABLES[args.channel];
  const write = (): Promise<ChannelConfigRow[]> =>
    args.id ? db(table).where({ id: args.id }).update({ ...args.columns, updated_at: db.fn.now() }).returning('*') : db(table).insert(args.columns).returning('*');
  const [row] = await uniqueOr409(write, 'CONFIG_NAME_TAKEN', nameTaken);
  return args.activate ? activateConfig(db, args.channel, row.id) : row;
}

export async function deleteConfig(db: Knex, channel: Channel, id: string): Promise<void> {
  await db(CONFIG_TABLES[channel]).where({ id }).delete();
}
