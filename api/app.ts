import path from 'node:path';
import Router from '@koa/router';
import Koa from 'koa';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { AppDeps } from './deps';
import { createTokenVerifier, gatewayIdentity } from './http/identity';
import { buildOpenApi } from './http/openapi';
import { consoleFiles } from './http/console-files';
import { problemMiddleware } from './http/problem';
import { requestContext } from './http/request-context';
import { AnyRoute, ContractBreach, mountRoutes } from './http/route';
import { ApiModule } from './http/module';
import { approvalsModule } from './modules/approvals';
import { archivalModule } from './modules/archival';
import { assetsModule } from './modules/assets';
import { contentModule } from './modules/content';
import { deployModule } from './modules/deploy';
import { assertPlatformPathsReserved } from './modules/deploy/reserved-paths';
import { directoryModule } from './modules/directory';
import { messagingModule } from './modules/messaging';
import { operationsModule } from './modules/operations';
import { PROJECT_ROOT } from '../lib/project-root';
import { temporalCodecCors } from './modules/operations/temporal-codec';
import { platformReading, registerPlatformMetrics } from './modules/operations/platform-metrics';

export interface App {
  koa: Koa;
  modules: ApiModule[];
  routes: AnyRoute[];
  close(): void;
}

export interface AppOptions {
  /**
   * Told of every answer outside its route's declared contract: an undeclared error code or status, or a
   * body off its schema. The test platform fails a test file on any; production leaves it unset.
   */
  onContractBreach?: (breach: ContractBreach) => void;
}

/** Builds the API (every platform module) from its dependencies; does not listen. Deployed services are the edge's (Envoy's) to route. */
export function createApp(deps: AppDeps, options: AppOptions = {}): App {
  const koa = new Koa({ proxy: false });
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const reading = platformReading(deps);
  registerPlatformMetrics(metrics, reading);
  const verifier = createTokenVerifier({ config: deps.config, logger: deps.logger });

  let openapi: Record<string, unknown> | null = null;
  // One module per domain, each serving the URL prefixes it declares.
  const modules: ApiModule[] = [
    operationsModule({ deps, metrics, reading, openapi: () => (openapi ??= buildOpenApi(routes)) }),
    directoryModule(deps, verifier),
    assetsModule(deps),
    archivalModule(deps),
    messagingModule(deps),
    deployModule(deps),
    contentModule(deps),
    approvalsModule(deps),
  ];
  const routes: AnyRoute[] = modules.flatMap((module) => module.routes);
  assertPlatformPathsReserved(routes.map((route) => route.path));

  const router = new Router();
  mountRoutes(router, routes, { onContractBreach: options.onContractBreach, db: deps.db });

  koa.use(requestContext({ logger: deps.logger, metrics }));
  const breach = options.onContractBreach;
  koa.use(
    problemMiddleware({ onUndeclared: breach && ((answer) => breach({ route: answer.route, breach: `answered ${answer.code}, which it does not declare` })) }),
  );
  koa.use(temporalCodecCors(deps));
  koa.use(gatewayIdentity({ verifier, internalToken: deps.config.secrets.internalToken }));
  // The operator console: static files, no identity needed to load them (its calls carry the token).
  koa.use(consoleFiles(path.join(PROJECT_ROOT, 'console', 'dist')));
  koa.use(router.routes());
  koa.use(router.allowedMethods({ throw: true }));
  koa.silent = true;
  return { koa, modules, routes, close: () => verifier.close() };
}
