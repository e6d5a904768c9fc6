/**
 * `npm run migrate`: applies pending migrations to DATABASE_URL; and, where the Temporal server checks the
 * platform's service tokens (TEMPORAL_IDENTITY_DIR), makes the signing key once, before any node reads its JWKS.
 */
import { loadConfig } from '../lib/config';
import { createDb } from '../data/db';
import { migrateLatest } from '../data/migrate';
import { loadOrCreateSigningKey } from '../temporal-config/service-identity';

async function main(): Promise<void> {
  const config = loadConfig();
  const db = createDb({ databaseUrl: config.databaseUrl, poolMax: 2 });
  try {
    const applied = await migrateLatest(db);
    console.log(applied.length === 0 ? 'Already up to date.' : `Applied: ${applied.join(', ')}`);
  } finally {
    await db.destroy();
  }
  if (config.temporalIdentityDir) console.log(`Temporal service identity: key ${loadOrCreateSigningKey(config.temporalIdentityDir).kid} in ${config.temporalIdentityDir}`);
}

void main();
