/** `npm run migrate`: applies pending migrations to DATABASE_URL. */
import { loadConfig } from '../lib/config';
import { createDb } from '../data/db';
import { migrateLatest } from '../data/migrate';

async function main(): Promise<void> {
  const db = createDb({ databaseUrl: loadConfig().databaseUrl, poolMax: 2 });
  try {
    const applied = await migrateLatest(db);
    console.log(applied.length === 0 ? 'Already up to date.' : `Applied: ${applied.join(', ')}`);
  } finally {
    await db.destroy();
  }
}

void main();
