/**
 * `npm run migrate`: applies pending migrations to DATABASE_URL; and, where the Temporal server checks the
 * platform's service tokens (TEMPORAL_IDENTITY_DIR), makes the signing key and the cluster's certificates
 * once, before any node reads them.
 */
import path from 'node:path';
import { loadConfig } from '../lib/config';
import { createDb } from '../data/db';
import { migrateLatest } from '../data/migrate';
import { loadOrCreateSigningKey } from '../temporal-config/service-identity';
import { ensureTemporalTls } from '../temporal-config/server-certificates';

async function main(): Promise<void> {
  const config = loadConfig();
  const db = createDb({ databaseUrl: config.databaseUrl, poolMax: 2 });
  try {
    const applied = await migrateLatest(db);
    console.log(applied.length === 0 ? 'Already up to date.' : `Applied: ${applied.join(', ')}`);
  } finally {
    await db.destroy();
  }
  if (config.temporalIdentityDir) {
    console.log(`Temporal service identity: key ${loadOrCreateSigningKey(config.temporalIdentityDir).kid} in ${config.temporalIdentityDir}`);
    // The cluster's TLS: its authority and the nodes' certificate, where TEMPORAL_TLS_CA_FILE says (else beside the key).
    const tlsDir = config.temporalTlsCaFile ? path.dirname(config.temporalTlsCaFile) : path.join(config.temporalIdentityDir, 'tls');
    console.log(`Temporal TLS: authority ${ensureTemporalTls(tlsDir).caFile}`);
  }
}

void main();
