/**
 * `npx tsx scripts/temporal-setup.ts`: registers the platform's namespace (TEMPORAL_NAMESPACE) and its
 * search attributes on a cluster whose door is locked, with a two-minute administrator's token signed by the
 * administrator's key (TEMPORAL_ADMIN_IDENTITY_DIR, else `admin` inside TEMPORAL_IDENTITY_DIR): what the
 * processes' own `<namespace>:write` tokens, and any token of their key, may not do.
 * Idempotent; docker compose runs it once the door answers, before the API and the workers.
 */
import { loadConfig } from '../lib/config';
import { adminIdentityDirOf } from '../temporal-config/service-identity';
import { ensureClusterNamespaces } from './platform/temporal-namespaces';

async function main(): Promise<void> {
  const config = loadConfig();
  const identityDir = config.temporal.adminIdentityDir ?? config.temporal.identityDir;
  if (!identityDir) {
    console.error('TEMPORAL_ADMIN_IDENTITY_DIR is needed: the administrator token is signed with the key it holds.');
    process.exit(2);
  }
  const adminIdentityDir = adminIdentityDirOf(identityDir, config.temporal.adminIdentityDir);
  await ensureClusterNamespaces({ address: config.temporal.address, nodes: [], adminIdentityDir, tlsCaFile: config.temporal.tlsCaFile }, [
    config.temporal.namespace,
  ]);
  console.log(`Temporal namespace ${config.temporal.namespace} and its search attributes are registered at ${config.temporal.address}`);
}

main().catch((error: unknown) => {
  console.error(`Temporal setup failed: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
});
