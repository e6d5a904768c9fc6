import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureTemporalServer } from '../../scripts/temporal-server';
import { RunningTemporalCluster, startTemporalCluster } from '../../scripts/platform/temporal-cluster';
import { ensureClusterNamespaces } from '../../scripts/platform/temporal-namespaces';
import { attachPlatform, sharedPostgresAdminUrl, TestPlatform } from './platform';
import { SLOT_NAMESPACE_PREFIX } from './slots';

export interface OwnTemporalCluster {
  cluster: RunningTemporalCluster;
  /** A test platform whose API, workers and client use the cluster (through its door, with tokens, over TLS). */
  platform: TestPlatform;
  /** Where the cluster keeps its logs, door and identity. */
  dir: string;
  /** Its two databases on the shared PostgreSQL. */
  databases: { history: string; visibility: string };
  close(): Promise<void>;
}

/**
 * A Temporal cluster of a test file's own: two nodes of the pinned server on the shared PostgreSQL (in
 * databases of its own, emptied first), behind their door, and a test platform attached to it.
 */
export async function startOwnTemporalCluster(name: string): Promise<OwnTemporalCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `opsflow-temporal-${name}-`));
  const postgres = new URL(sharedPostgresAdminUrl());
  const database = `temporal_${name.replace(/-/g, '_')}`;
  const databases = { history: database, visibility: `${database}_visibility` };
  const cluster = await startTemporalCluster({
    binaries: await ensureTemporalServer(),
    sql: { host: postgres.hostname, port: Number(postgres.port), user: decodeURIComponent(postgres.username), password: decodeURIComponent(postgres.password) },
    databases,
    fresh: true,
    namespaces: [],
    // The test platform's namespace is its slot's, known once it is attached below.
    workloadNamespaces: [`${SLOT_NAMESPACE_PREFIX}*`],
    dir,
    identityDir: path.join(dir, 'identity'),
  });
  const platform = await attachPlatform({
    env: { TEMPORAL_ADDRESS: cluster.address, TEMPORAL_IDENTITY_DIR: cluster.identityDir, TEMPORAL_TLS_CA_FILE: cluster.tlsCaFile },
  });
  await ensureClusterNamespaces(cluster, [platform.config.temporal.namespace]);
  return {
    cluster,
    platform,
    dir,
    databases,
    close: async () => {
      await platform.close();
      await cluster.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
