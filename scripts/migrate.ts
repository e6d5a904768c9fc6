/**
 * `npm run migrate`: applies pending migrations to DATABASE_URL; and, where the Temporal server checks the
 * platform's service tokens (TEMPORAL_IDENTITY_DIR), makes the signing keys (the workload's and the
 * administrator's) and the cluster's certificates once, before any node reads them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../lib/config';
import { createDb } from '../data/db';
import { migrateLatest } from '../data/migrate';
import { adminIdentityDirOf, loadOrCreateSigningKey } from '../temporal-config/service-identity';
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
  if (config.temporal.identityDir) {
    const key = loadOrCreateSigningKey(config.temporal.identityDir);
    console.log(`Temporal service identity: key ${key.kid} in ${config.temporal.identityDir}`);
    // The administrator's key, apart from the workload key (#58, finding 6): in compose on a volume that only
    // this job and the setup job mount, so that the API and the workers can mint no admin token.
    const admin = loadOrCreateSigningKey(adminIdentityDirOf(config.temporal.identityDir, config.temporal.adminIdentityDir));
    console.log(`Temporal administrator identity: key ${admin.kid}`);
    // The cluster's TLS: its authority and the nodes' certificate (a folder inside the volume: a mount point
    // itself cannot be renamed onto).
    const tls = ensureTemporalTls(config.temporal.tlsDir ?? path.join(config.temporal.identityDir, 'tls'));
    console.log(`Temporal TLS: authority ${tls.caFile}`);
    // The public halves, on a volume of their own: the nodes read the JWKS and every client the authority,
    // and none of them mounts the private keys beside which they were made.
    if (config.temporal.publicDir) {
      fs.mkdirSync(config.temporal.publicDir, { recursive: true });
      fs.copyFileSync(tls.caFile, path.join(config.temporal.publicDir, 'ca.pem'));
      fs.copyFileSync(key.jwksFile, path.join(config.temporal.publicDir, 'jwks.json'));
      fs.copyFileSync(admin.jwksFile, path.join(config.temporal.publicDir, 'admin-jwks.json'));
      console.log(`Temporal public files: ${config.temporal.publicDir}/ca.pem, jwks.json and admin-jwks.json`);
    }
  }
}

void main();
