import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { ensureSearchAttributes } from '../../temporal-config/search-attributes';
import { loadOrCreateSigningKey, signServiceToken } from '../../temporal-config/service-identity';
import { clientTlsOf } from '../../temporal-config/server-certificates';

/** What registering namespaces needs of a running cluster (temporal-cluster.ts's, which calls this). */
export interface ClusterForNamespaces {
  address: string;
  nodes: Array<{ name: string; frontend: string; running(): boolean }>;
  adminIdentityDir: string;
  tlsCaFile: string | null;
}

/** How long a closed run's history is kept, as the dev server keeps it. */
const RETENTION_DAYS = 3;

/**
 * Registers namespaces (idempotent) with the platform's search attributes, and answers once every node's
 * frontend knows them: each node learns of a new namespace on its own refresh.
 */
export async function ensureClusterNamespaces(cluster: ClusterForNamespaces, namespaces: string[]): Promise<void> {
  // Registering a namespace and its search attributes is an administrator's: a token of two minutes for it,
  // which the waits below (a minute at most each) may outlive only when they fail anyway. It is signed with
  // the administrator's key: the nodes take no admin role from the key the API and the workers hold.
  const apiKey = signServiceToken(loadOrCreateSigningKey(cluster.adminIdentityDir), {
    subject: 'opsflow-setup',
    permissions: ['temporal-system:admin'],
    seconds: 120,
  });
  const tls = clientTlsOf(cluster.tlsCaFile) ?? false;
  const connection = await Connection.connect({ address: cluster.address, apiKey, tls });
  try {
    for (const namespace of namespaces) {
      await connection.workflowService
        .registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs(`${RETENTION_DAYS} days`) })
        .catch((error: { code?: number }) => {
          // 6: ALREADY_EXISTS, from an earlier start on the same databases.
          if (error.code !== 6) throw error;
        });
      await untilDone(`namespace ${namespace} with its search attributes`, () => ensureSearchAttributes(connection, namespace));
    }
  } finally {
    await connection.close();
  }
  for (const node of cluster.nodes) {
    if (!node.running()) continue;
    const direct = await Connection.connect({ address: node.frontend, apiKey, tls });
    try {
      for (const namespace of namespaces)
        await untilDone(`${node.name} to know namespace ${namespace}`, () => direct.workflowService.describeNamespace({ namespace }));
    } finally {
      await direct.close();
    }
  }
}

/** Tries `work` until it succeeds, for up to 60 s (a namespace reaches every node on the node's next refresh). */
async function untilDone(what: string, work: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + 60000;
  for (;;) {
    try {
      await work();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`Temporal cluster: waited 60 s for ${what}: ${(error as Error).message}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}
