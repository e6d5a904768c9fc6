import { Knex } from 'knex';
import { decryptSecret, encryptSecret, SecretKeys } from '../../lib/secrets';
import { uniqueOr409 } from '../db-errors';
import { reencryptColumns } from '../sealed-columns';
import { notFound } from '../../lib/errors';
import { Page, PageRequest, paginate } from '../paging';
import type { Transport } from '../../domain/messaging';

export type Channel = 'EMAIL' | 'SMS';

export const CONFIG_TABLES: Record<Channel, string> = { EMAIL: 'settings.email_configuration', SMS: 'settings.sms_configuration' };

export interface ChannelConfigRow {
  id: string;
  config_name: string;
  transport: Transport;
  is_active: boolean;
  /** Among the active configurations of a channel, the lowest is tried first. */
  priority: number;
  smtp_host?: string | null;
  smtp_port?: number | null;
  smtp_username?: string | null;
  smtp_password?: string | null;
  smtp_use_ssl?: boolean;
  smtp_use_tls?: boolean;
  /** Plain SMTP even where the server offers STARTTLS: only when the configuration says so. */
  smtp_allow_plain?: boolean;
  service_url: string | null;
  sample_request: string | null;
  service_username: string | null;
  service_password: string | null;
  soap_method_name: string | null;
  rest_method_type: 'POST' | 'PUT' | 'PATCH' | 'GET' | null;
  /** Messages a second, across every worker (numeric: read as a string); null is no limit. */
  rate_per_second?: string | number | null;
  /** Messages that may go at once; null is one second of the rate. */
  burst?: number | null;
  created_at: Date;
  updated_at: Date;
}

/** A configuration's columns as written: passwords already encrypted; a password left undefined keeps the stored one. */
export type ConfigColumns = Partial<Omit<ChannelConfigRow, 'id' | 'created_at' | 'updated_at'>>;

const PASSWORD_COLUMNS = ['smtp_password', 'service_password'] as const;

/** Encrypts the passwords among `columns` for row `rowId` of the channel's table; undefined stays undefined (kept), '' clears. */
export function sealPasswords(columns: ConfigColumns, keys: SecretKeys, at: { channel: Channel; rowId: string }): ConfigColumns {
  const sealed = { ...columns };
  for (const column of PASSWORD_COLUMNS) {
    const value = columns[column];
    if (typeof value === 'string' && value !== '') sealed[column] = encryptSecret(value, keys, { table: CONFIG_TABLES[at.channel], column, rowId: at.rowId });
    else if (value === '') sealed[column] = null;
  }
  return sealed;
}

/** The plain passwords of a configuration of `channel`, for a transport about to use them; a tampered or moved one throws. */
export function openPasswords(row: ChannelConfigRow, keys: SecretKeys, channel: Channel): { smtpPassword: string | null; servicePassword: string | null } {
  const opened = (column: (typeof PASSWORD_COLUMNS)[number]) => {
    const stored = row[column];
    return stored ? decryptSecret(stored, keys, { table: CONFIG_TABLES[channel], column, rowId: row.id }) : null;
  };
  return { smtpPassword: opened('smtp_password'), servicePassword: opened('service_password') };
}

/**
 * Re-encrypts every stored password that the current key did not write (an earlier key, or an earlier
 * format), row by row; repeating it changes nothing. Answers how many it rewrote, and where a password
 * could be read with neither key (tampered, or written under a key that is gone): those stay as they were.
 */
export async function reencryptPasswords(db: Knex, keys: SecretKeys): Promise<{ rewritten: number; unreadable: string[] }> {
  let rewritten = 0;
  const unreadable: string[] = [];
  for (const [channel, table] of Object.entries(CONFIG_TABLES) as Array<[Channel, string]>) {
    const columns = channel === 'EMAIL' ? PASSWORD_COLUMNS : (['service_password'] as const);
    const done = await reencryptColumns(db, keys, { table, idColumn: 'id', columns });
    rewritten += done.rewritten;
    unreadable.push(...done.unreadable);
  }
  return { rewritten, unreadable };
}

export async function findConfig(db: Knex, channel: Channel, id: string): Promise<ChannelConfigRow | undefined> {
  return db<ChannelConfigRow>(CONFIG_TABLES[channel]).where({ id }).first();
}

/** The active configurations of a channel, in the order a message tries them. */
export async function activeConfigs(db: Knex, channel: Channel): Promise<ChannelConfigRow[]> {
  return db<ChannelConfigRow>(CONFIG_TABLES[channel])
    .where({ is_active: true })
    .orderBy([{ column: 'priority' }, { column: 'created_at' }, { column: 'id' }]);
}

/** The first of the channel's active configurations. */
export async function activeConfig(db: Knex, channel: Channel): Promise<ChannelConfigRow | undefined> {
  return (await activeConfigs(db, channel))[0];
}

/** Activates one configuration of the channel, alone: the others are deactivated, in one transaction. */
export async function activateConfig(db: Knex, channel: Channel, id: string): Promise<ChannelConfigRow> {
  const [row] = await orderActiveConfigs(db, channel, [id]);
  return row;
}

/**
 * Makes exactly `ids` the channel's active configurations, tried in that order; every other one is
 * deactivated, in one transaction. Answers them in order; an id that names no configuration is 404 and
 * changes nothing.
 */
export async function orderActiveConfigs(db: Knex, channel: Channel, ids: readonly string[]): Promise<ChannelConfigRow[]> {
  return db.transaction(async (trx) => {
    // Every configuration of the channel locked: two orders given at once apply one after the other, whole.
    const known = new Set((await trx(CONFIG_TABLES[channel]).select('id').forUpdate()).map((row: { id: string }) => row.id));
    const unknown = ids.find((id) => !known.has(id));
    if (unknown) throw notFound(`No ${channel.toLowerCase()} configuration ${unknown}.`);
    await trx(CONFIG_TABLES[channel])
      .where({ is_active: true })
      .whereNotIn('id', [...ids])
      .update({ is_active: false, updated_at: trx.fn.now() });
    const rows: ChannelConfigRow[] = [];
    for (const [priority, id] of ids.entries()) {
      const [row] = (await trx(CONFIG_TABLES[channel])
        .where({ id })
        .update({ is_active: true, priority, updated_at: trx.fn.now() })
        .returning('*')) as ChannelConfigRow[];
      if (row) rows.push(row);
    }
    return rows;
  });
}

/** A page of a channel's configurations, newest first. */
export async function listConfigs(db: Knex, channel: Channel, page: PageRequest): Promise<Page<ChannelConfigRow>> {
  return paginate<ChannelConfigRow>({ query: db(CONFIG_TABLES[channel]).select('*'), ...page, timeColumn: 'created_at', idColumn: 'id' });
}

const nameTaken = 'Another configuration has that name.';

/**
 * Saves the columns of configuration `id`, a new one (`create`, its id chosen beforehand so that its
 * passwords could be sealed to it) or a changed one, then activates it when asked; 409 CONFIG_NAME_TAKEN
 * for a name in use.
 */
export async function saveConfig(
  db: Knex,
  args: { channel: Channel; id: string; create: boolean; columns: ConfigColumns; activate: boolean | undefined },
): Promise<ChannelConfigRow> {
  const table = CONFIG_TABLES[args.channel];
  const write = (): Promise<ChannelConfigRow[]> =>
    args.create
      ? db<ChannelConfigRow>(table)
          .insert({ ...args.columns, id: args.id })
          .returning('*')
      : db<ChannelConfigRow>(table)
          .where({ id: args.id })
          .update({ ...args.columns, updated_at: db.fn.now() })
          .returning('*');
  const [row] = await uniqueOr409(write, 'CONFIG_NAME_TAKEN', nameTaken);
  return args.activate ? activateConfig(db, args.channel, row.id) : row;
}

export async function deleteConfig(db: Knex, channel: Channel, id: string): Promise<void> {
  await db(CONFIG_TABLES[channel]).where({ id }).delete();
}
