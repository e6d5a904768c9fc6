import { Knex } from 'knex';
import { migrations } from '../migrations';
import { Db } from './db';

/** Reads migrations from the static list in migrations/index.ts, so no file is loaded by path at run time. */
const migrationSource: Knex.MigrationSource<Knex.Migration & { name: string }> = {
  getMigrations: async () => migrations,
  getMigrationName: (migration) => migration.name,
  getMigration: async (migration) => migration,
};

/** Applies every pending migration; safe to call on every start. */
export async function migrateLatest(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest({ migrationSource, tableName: 'knex_migrations' })) as [number, string[]];
  return applied;
}
