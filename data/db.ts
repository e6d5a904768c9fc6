import knex, { Knex } from 'knex';
import pg from 'pg';

export type Db = Knex;

// bigint ids (identity columns) fit in a JS number for any realistic table; counts come back as bigint too.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/** The knex instance every module's queries use. */
export function createDb(args: { databaseUrl: string; poolMax?: number }): Db {
  const db = knex({
    client: 'pg',
    // A database that is away fails a connect within 10 s and a pool wait within 20 s, not knex's 60 s:
    // under the 30 s heartbeat of the activities that wait for it to come back.
    connection: { connectionString: args.databaseUrl, connectionTimeoutMillis: 10000 },
    acquireConnectionTimeout: 20000,
    pool: { min: 0, max: args.poolMax ?? 10 },
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
