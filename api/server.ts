// First: tracing patches `pg` and `http` as they load.
import { tracing } from './tracing';
import http from 'node:http';
import { ConfigError, loadConfig } from '../lib/config';
import { secretKeysOf } from '../lib/secrets';
import { createLogger } from '../lib/logger';
import { createDb } from '../data/db';
import { createDocker } from '../adapters/docker';
import { registerCoreServices } from '../data/deploy/registry';
import { assertAuditTablesMirror } from '../data/content/revisions';
import { platformStorage } from './storage';
import { connectPlatformTemporal } from '../temporal-config/client';
import { createApp } from './app';
import { edgeSettingsOf, startEdgeControlPlane } from '../edge/control-plane';
import { registryForEdge } from '../data/deploy/registry-changes';
import { startBounceIntake } from './modules/messaging/bounce-intake';

/**
 * Starts the API process: every platform module on API_LISTEN_PORT and, with EDGE_DIR set, the edge's
 * control plane (Envoy, on API_PORT, routes deployed services from the files it writes).
 */
/** A certificate whose key no SECRETS_KEY opens is left off the edge, loudly: its name gets no HTTPS. */
const unreadableCertificate = (logger: { error: (fields: object, message: string) => void }) => (hostname: string) =>
  logger.error({ hostname }, 'a certificate key is unreadable with SECRETS_KEY and SECRETS_KEY_PREVIOUS; the edge serves that name without it');

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`Invalid configuration: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  const logger = createLogger({ level: config.logLevel, name: 'api', gathered: true });
  const db = createDb({ databaseUrl: config.databaseUrl });
  const temporal = await connectPlatformTemporal(config, 'opsflow-api');
  // Versioned writes copy rows into their _aud tables column for column: a drifted audit table stops start-up.
  await assertAuditTablesMirror(db);
  await registerCoreServices(db);
  const docker = createDocker({ dockerHost: config.dockerHost });
  const stores = platformStorage({ config, db });
  const app = createApp({ config, db, temporal, docker, storage: stores.storage, archives: stores.archives, logger });
  const edge = config.edge.dir
    ? startEdgeControlPlane({
        registry: registryForEdge(db, config.databaseUrl, secretKeysOf(config), unreadableCertificate(logger)),
        config,
        logger,
        edge: edgeSettingsOf(config, config.edge.dir),
      })
    : null;
  if (edge) await edge.ready;
  const bounces = await startBounceIntake({ db, config, logger });
  if (bounces) logger.info({ host: config.mail.bounceSmtp?.host, port: bounces.port }, 'delivery reports: listening by SMTP');
  const server = http.createServer(app.koa.callback());
  server.listen(config.api.listenPort, config.api.host, () =>
    logger.info({ host: config.api.host, port: config.api.listenPort, edge: config.edge.dir !== null }, 'api listening'),
  );

  const shutdown = () => {
    logger.info('api stopping');
    server.close();
    app.close();
    void edge?.close();
    void bounces?.close();
    stores.close();
    void Promise.allSettled([db.destroy(), temporal.connection.close(), tracing?.stop()]).then(() => process.exit(0));
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((error) => {
  console.error(`api failed to start: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
});
