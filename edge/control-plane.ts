import { Config } from '../lib/config';
import { Logger } from '../lib/logger';
import { EdgeInstance, EdgeService, RESERVED_SLUGS } from '../domain/deploy';
import { EdgeCertificate } from './xds';
import { platformHostnames } from '../domain/service-domains';
import { lingeringUntil, writeEdgeBootstrap, writeEdgeConfig } from './files';
import { EdgePlan, EdgeTracing } from './xds';

/** What the control plane reads the edge's services from: the service registry, and word of its changes. */
export interface EdgeRegistry {
  /** Every deployed service with its instances, as the registry holds them now. */
  services(): Promise<EdgeService[]>;
  /** Every certificate the edge is to serve, with its key. */
  certificates(): Promise<EdgeCertificate[]>;
  /** Calls `changed` on every change of the registry, whoever made it; `interrupted` when the word stops (it listens again). */
  onChanges(changed: () => void, interrupted: (error: unknown) => void): { close(): Promise<void> };
}

export interface EdgeSettings {
  /** The folder of the xDS files Envoy watches. */
  dir: string;
  /** Where Envoy listens: the platform's front door. */
  listen: EdgeInstance;
  /** Where Envoy serves HTTPS, once it holds a certificate, and the port clients see it on. */
  tlsListen: EdgeInstance;
  tlsPublicPort: number;
  /** Where this API listens, behind Envoy. */
  api: EdgeInstance;
  /** Envoy's admin, for its bootstrap (an Envoy in a container of its own starts on the bootstrap written here). */
  admin?: EdgeInstance;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
  /** Where the edge's spans go (the platform's OTEL_EXPORTER_OTLP_ENDPOINT), when tracing is on. */
  tracing?: EdgeTracing;
}

/** The edge as the configuration says: Envoy on the front door (API_HOST:API_PORT), the API at EDGE_API_ADDRESS behind it. */
export function edgeSettingsOf(config: Pick<Config, 'api' | 'edge' | 'observability'>, dir: string): EdgeSettings {
  const admin = config.edge.adminUrl ? new URL(config.edge.adminUrl) : null;
  return {
    dir,
    admin: admin ? { host: admin.hostname, port: Number(admin.port || 80) } : undefined,
    listen: { host: config.api.host, port: config.api.port },
    tlsListen: { host: config.api.host, port: config.edge.tlsPort },
    tlsPublicPort: config.edge.tlsPublicPort,
    api: config.edge.apiAddress,
    connectTimeoutMs: config.edge.connectTimeoutMs,
    idleTimeoutMs: config.edge.idleTimeoutSeconds * 1000,
    ...(config.observability.tracing ? { tracing: config.observability.tracing } : {}),
  };
}

/** How often the first write is tried, a second apart, before the start fails with its reason. */
const FIRST_WRITE_ATTEMPTS = 5;

/** A full rewrite this often, whatever was notified: a lost notification is mended within this time. */
const RESYNC_MS = 10000;

/** The edge's plan: its own settings, and the registry's services and certificates as they are now. */
export async function edgePlanOf(registry: EdgeRegistry, config: EdgePlanConfig, edge: EdgeSettings): Promise<EdgePlan> {
  const jwks =
    config.identity.jwksUrl && config.identity.issuer && config.identity.audience
      ? { url: config.identity.jwksUrl, issuer: config.identity.issuer, audience: config.identity.audience, caFile: config.identity.jwksCaFile }
      : undefined;
  return {
    dir: edge.dir,
    tls: { listen: edge.tlsListen, publicPort: edge.tlsPublicPort, certificates: await registry.certificates() },
    listen: edge.listen,
    api: edge.api,
    reservedSlugs: RESERVED_SLUGS,
    services: await registry.services(),
    platformHostnames: platformHostnames(config.api.publicUrl),
    jwt: { hs256Secret: config.identity.jwtSecret, jwks },
    connectTimeoutMs: edge.connectTimeoutMs,
    idleTimeoutMs: edge.idleTimeoutMs,
    ...(edge.tracing ? { tracing: edge.tracing } : {}),
  };
}

/** The settings the edge's plan is made of. */
export type EdgePlanConfig = Pick<Config, 'identity' | 'api'>;

/**
 * The Koa API as the edge's control plane: it writes Envoy's configuration from the registry at start, on
 * every registry change (notified by PostgreSQL, whoever made it), and every ten seconds. Rewrites run one
 * at a time; changes notified during one are written by the next.
 */
export function startEdgeControlPlane(args: { registry: EdgeRegistry; config: EdgePlanConfig; logger: Logger; edge: EdgeSettings }) {
  const { config, edge } = args;
  const planOf = () => edgePlanOf(args.registry, config, edge);

  let running: Promise<void> | null = null;
  let again = false;
  // A rewrite when the first lingering cluster is due to go: a new canary at its hosts' addresses waits for it.
  let lingerTimer: NodeJS.Timeout | null = null;
  const rewriteWhenLingerEnds = () => {
    const until = lingeringUntil(edge.dir);
    if (lingerTimer) clearTimeout(lingerTimer);
    lingerTimer = until === null ? null : setTimeout(() => void refresh(), Math.max(0, until - Date.now()) + 50);
    lingerTimer?.unref();
  };
  // Why the last rewrite failed, or null once one has succeeded.
  let lastFailure: unknown = null;
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
          lastFailure = null;
          rewriteWhenLingerEnds();
        } catch (error) {
          lastFailure = error;
          args.logger.error({ err: error }, 'could not write the edge configuration; the previous one stays');
        }
      } while (again);
    })().finally(() => (running = null));
    return running;
  };

  if (edge.admin) writeEdgeBootstrap({ dir: edge.dir, adminHost: edge.admin.host, adminPort: edge.admin.port });
  // Envoy cannot start on files never written: the first write is tried a few times, then fails the start
  // with its reason, instead of an API that answers beside an edge that cannot come up.
  const ready = (async () => {
    for (let attempt = 1; ; attempt++) {
      await refresh();
      if (lastFailure === null) return;
      if (attempt === FIRST_WRITE_ATTEMPTS) {
        throw new Error(`could not write the edge configuration in ${edge.dir}: ${lastFailure instanceof Error ? lastFailure.message : String(lastFailure)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  })();
  const changes = args.registry.onChanges(
    () => void refresh(),
    (error) => args.logger.warn({ err: error }, 'registry notifications interrupted; listening again'),
  );
  const resync = setInterval(() => void refresh(), RESYNC_MS);
  resync.unref();
  return {
    /** Resolves once the configuration of the registry as it is now has been written. */
    ready,
    refresh,
    close: async () => {
      clearInterval(resync);
      if (lingerTimer) clearTimeout(lingerTimer);
      await changes.close();
      await running;
    },
  };
}
