import type { Knex } from 'knex';
import { Config } from '../../../lib/config';
import { Logger } from '../../../lib/logger';
import { RESERVED_SLUGS } from '../../../domain/deploy';
import { edgeServices } from '../../../data/deploy/registry';
import { onRegistryChanges } from '../../../data/deploy/registry-changes';
import { writeEdgeBootstrap, writeEdgeConfig } from '../../../data/deploy/edge/edge-files';
import { EdgeInstance, EdgePlan } from '../../../data/deploy/edge/envoy-config';

export interface EdgeSettings {
  /** The folder of the xDS files Envoy watches. */
  dir: string;
  /** Where Envoy listens: the platform's front door. */
  listen: EdgeInstance;
  /** Where this API listens, behind Envoy. */
  api: EdgeInstance;
  /** Envoy's admin, for its bootstrap (an Envoy in a container of its own starts on the bootstrap written here). */
  admin?: EdgeInstance;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
}

/** The edge as the configuration says: Envoy on the front door (API_HOST:API_PORT), the API at EDGE_API_ADDRESS behind it. */
export function edgeSettingsOf(config: Pick<Config, 'apiHost' | 'apiPort' | 'edgeApiAddress' | 'edgeAdminUrl' | 'edgeConnectTimeoutMs' | 'edgeIdleTimeoutSeconds'>, dir: string): EdgeSettings {
  const admin = config.edgeAdminUrl ? new URL(config.edgeAdminUrl) : null;
  return {
    dir,
    admin: admin ? { host: admin.hostname, port: Number(admin.port || 80) } : undefined,
    listen: { host: config.apiHost, port: config.apiPort },
    api: config.edgeApiAddress,
    connectTimeoutMs: config.edgeConnectTimeoutMs,
    idleTimeoutMs: config.edgeIdleTimeoutSeconds * 1000,
  };
}

/** A full rewrite this often, whatever was notified: a lost notification is mended within this time. */
const RESYNC_MS = 10000;

/**
 * The Koa API as the edge's control plane: it writes Envoy's configuration from the registry at start, on
 * every registry change (notified by PostgreSQL, whoever made it), and every ten seconds. Rewrites run one
 * at a time; changes notified during one are written by the next.
 */
export function startEdgeControlPlane(args: { db: Knex; config: Pick<Config, 'databaseUrl' | 'jwtSecret' | 'jwtJwksUrl' | 'jwtJwksCaFile' | 'jwtIssuer' | 'jwtAudience'>; logger: Logger; edge: EdgeSettings }) {
  const { config, edge } = args;
  const jwks = config.jwtJwksUrl && config.jwtIssuer && config.jwtAudience ? { url: config.jwtJwksUrl, issuer: config.jwtIssuer, audience: config.jwtAudience, caFile: config.jwtJwksCaFile } : undefined;
  const planOf = async (): Promise<EdgePlan> => ({
    dir: edge.dir,
    listen: edge.listen,
    api: edge.api,
    reservedSlugs: RESERVED_SLUGS,
    services: await edgeServices(args.db),
    jwt: { hs256Secret: config.jwtSecret, jwks },
    connectTimeoutMs: edge.connectTimeoutMs,
    idleTimeoutMs: edge.idleTimeoutMs,
  });

  let running: Promise<void> | null = null;
  let again = false;
  const refresh = (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        try {
          writeEdgeConfig(await planOf());
        } catch (error) {
          args.logger.error({ err: error }, 'could not write the edge configuration; the previous one stays');
        }
      } while (again);
    })().finally(() => (running = null));
    return running;
  };

  if (edge.admin) writeEdgeBootstrap({ dir: edge.dir, adminHost: edge.admin.host, adminPort: edge.admin.port });
  const ready = refresh();
  const changes = onRegistryChanges(config.databaseUrl, () => void refresh(), (error) => args.logger.warn({ err: error }, 'registry notifications interrupted; listening again'));
  const resync = setInterval(() => void refresh(), RESYNC_MS);
  resync.unref();
  return {
    /** Resolves once the configuration of the registry as it is now has been written. */
    ready,
    refresh,
    close: async () => {
      clearInterval(resync);
      await changes.close();
      await running;
    },
  };
}
