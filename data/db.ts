import knex, { Knex } from 'knex';
import pg from 'pg';

export type Db = Knex;

// bigint ids (identity columns) fit in a JS number for any realistic table; counts come back as bigint too.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/** The knex instance every module's queries use. */
export function createDb(args: { databaseUrl: string; poolMax?: number }): Db {
  const db = knex({
    client: 'pg',
    connection: args.databaseUrl,
    pool: { min: 0, max: args.poolMax ?? 10 },
  });
  return db;
}

/** Answers when the database does: the readiness check. */
export async function pingDatabase(db: Db): Promise<void> {
  await db.raw('select 1');
}
