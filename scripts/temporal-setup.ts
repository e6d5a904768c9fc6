/**
 * `npx tsx scripts/temporal-setup.ts`: registers the platform's namespace (TEMPORAL_NAMESPACE) and its
 * search attributes on a cluster whose door is locked, with a two-minute administrator's token signed by the
 * platform's key (TEMPORAL_IDENTITY_DIR): what the processes' own `<namespace>:write` tokens may not do.
 * Idempotent; docker compose runs it once the door answers, before the API and the workers.
 */
import { loadConfig } from '../lib/config';
import { ensureClusterNamespaces } from './platform/temporal-cluster';

async function main(): Promise<void> {
  const config = loadConfig();
  if (!config.temporalIdentityDir) {
    console.error('TEMPORAL_IDENTITY_DIR is needed: the administrator token is signed with the key it holds.');
    process.exit(2);
  }
  await ensureClusterNamespaces({ address: config.temporalAddress, nodes: [], identityDir: config.temporalIdentityDir, tlsCaFile: config.temporalTlsCaFile }, [
    config.temporalNamespace,
  ]);
  console.log(`Temporal namespace ${config.temporalNamespace} and its search attributes are registered at ${config.temporalAddress}`);
}

main().catch((error: unknown) => {
  console.error(`Temporal setup failed: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
});
