import knex, { Knex } from 'knex';
import pg from 'pg';

export type Db = Knex;

// bigint ids (identity columns) fit in a JS number for any realistic table; counts come back as bigint too.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/**
 * Run on every session that runs the platform's statements (the pool's, and each COPY client's; the LISTEN
 * clients only wait for notifications): PostgreSQL checks each second, while a statement runs or waits
 * for a lock, that its client is still there, and ends the statement when it is not. A worker killed while
 * its statement waits (a DETACH … CONCURRENTLY, a DELETE behind a lock) takes its statement with it,
 * instead of leaving it to run on later, out of its activity's hands. Set after connecting rather than as a
 * startup option, so that a server before 14 (which lacks it) still serves and a pooler that refuses startup
 * options still connects (in transaction pooling the setting does not hold: connect to PostgreSQL itself).
 */
export const SESSION_SETTINGS_SQL =
  "select set_config('client_connection_check_interval', '1000', false) where current_setting('server_version_num')::int >= 140000";

/** A client of its own (a COPY's), connected with the platform's session settings. */
export async function connectClient(config: pg.ClientConfig): Promise<pg.Client> {
  const client = new pg.Client(config);
  // A dropped connection (a restart, a failover) rejects the query in flight where it is awaited; the
  // client's own 'error' event, idle or not, must not take the process down.
  client.on('error', () => undefined);
  await client.connect();
  await client.query(SESSION_SETTINGS_SQL);
  return client;
}

/** The knex instance every module's queries use. */
export function createDb(args: { databaseUrl: string; poolMax?: number }): Db {
  const db = knex({
    client: 'pg',
    // A database that is away fails a connect within 10 s and a pool wait within 20 s, not knex's 60 s:
    // under the 30 s heartbeat of the activities that wait for it to come back.
    connection: { connectionString: args.databaseUrl, connectionTimeoutMillis: 10000 },
    acquireConnectionTimeout: 20000,
    pool: {
      min: 0,
      max: args.poolMax ?? 10,
      afterCreate: (connection: pg.Client, done: (error: Error | null, connection: pg.Client) => void) => {
        connection.query(SESSION_SETTINGS_SQL, (error: Error | null) => done(error, connection));
      },
    },
  });
  return db;
}

/** Answers when the database does: the readiness check. */
export async function pingDatabase(db: Db): Promise<void> {
  await db.raw('select 1');
}

/** A value for a jsonb column: typed queries take it as a raw `?::jsonb` of its JSON text. */
export function jsonb(db: Knex, value: unknown): Knex.Raw {
  return db.raw('?::jsonb', [JSON.stringify(value)]);
}

/** The rows of a raw statement, typed as its SQL selects (or returns) them. */
export async function rawRows<Row>(db: Knex, sql: string, bindings: readonly Knex.RawBinding[] | Knex.ValueDict = []): Promise<Row[]> {
  const result = (await db.raw(sql, bindings as Knex.RawBinding[])) as { rows: Row[] };
  return result.rows;
}

/**
 * A raw statement run as a named prepared statement (`$1`, `$2`… for its values) on a pooled connection:
 * each connection plans it once, then reuses the plan. For a statement run thousands of times a minute on a
 * partitioned table, whose planning costs more than its run (bench/email: a bulk send's claim and record).
 */
export async function preparedRows<Row>(db: Knex, name: string, text: string, values: readonly unknown[]): Promise<Row[]> {
  // A pooled connection is not the transaction's: run inside one, the statement would escape it.
  if ((db as Knex.Transaction).isTransaction) throw new Error(`preparedRows(${name}) runs on the pool, not in a transaction`);
  const pool = db.client as { acquireConnection(): Promise<pg.Client>; releaseConnection(connection: pg.Client): Promise<void> };
  const connection = await pool.acquireConnection();
  try {
    return (await connection.query<Row & pg.QueryResultRow>({ name, text, values: values as unknown[] })).rows;
  } finally {
    await pool.releaseConnection(connection);
  }
}

/** How many rows a raw statement changed. */
export async function rawRowCount(db: Knex, sql: string, bindings: readonly Knex.RawBinding[] | Knex.ValueDict = []): Promise<number> {
  const result = (await db.raw(sql, bindings as Knex.RawBinding[])) as { rowCount: number | null };
  return result.rowCount ?? 0;
}

/**
 * Runs `work` in a transaction that holds PostgreSQL's advisory lock on `key`: every caller with the same
 * key runs one at a time, across API processes, so a check and the write it allows cannot interleave.
 */
export async function serializedOn<T>(db: Knex, key: string, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  return db.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(hashtext(?))', [key]);
    return work(trx);
  });
}
