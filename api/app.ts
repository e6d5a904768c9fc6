import Router from '@koa/router';
import Koa from 'koa';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { AppDeps } from './deps';
import { createTokenVerifier, gatewayIdentity } from './http/identity';
import { buildOpenApi } from './http/openapi';
import { problemMiddleware } from './http/problem';
import { requestContext } from './http/request-context';
import { AnyRoute, ContractBreach, mountRoutes } from './http/route';
import { ApiModule } from './http/module';
import { approvalsModule } from './modules/approvals';
import { archivalModule } from './modules/archival';
import { assetsModule } from './modules/assets';
import { contentModule } from './modules/content';
import { deployModule } from './modules/deploy';
import { gatewayProxy } from './modules/deploy/gateway';
import { directoryModule } from './modules/directory';
import { messagingModule } from './modules/messaging';
import { operationsModule } from './modules/operations';

export interface App {
  koa: Koa;
  modules: ApiModule[];
  routes: AnyRoute[];
  close(): void;
}

/** Builds the API (gateway and every platform module) from its dependencies; does not listen. */
export interface AppOptions {
  /**
   * Told of every answer outside its route's declared contract: an undeclared error code or status, or a
   * body off its schema. The test platform fails a test file on any; production leaves it unset.
   */
  onContractBreach?: (breach: ContractBreach) => void;
}

export function createApp(deps: AppDeps, options: AppOptions = {}): App {
  const koa = new Koa({ proxy: false });
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const verifier = createTokenVerifier({ config: deps.config, logger: deps.logger });

  let openapi: Record<string, unknown> | null = null;
  // One module per domain, each serving the URL prefixes it declares.
  const modules: ApiModule[] = [
    operationsModule({ deps, metrics, openapi: () => (openapi ??= buildOpenApi(routes)) }),
    directoryModule(deps),
    assetsModule(deps),
    archivalModule(deps),
    messagingModule(deps),
    deployModule(deps),
    contentModule(deps),
    approvalsModule(deps),
  ];
  const routes: AnyRoute[] = modules.flatMap((module) => module.routes);

  const router = new Router();
  mountRoutes(router, routes, { onContractBreach: options.onContractBreach });

  koa.use(requestContext({ logger: deps.logger, metrics }));
  const breach = options.onContractBreach;
  koa.use(problemMiddleware({ onUndeclared: breach && ((answer) => breach({ route: answer.route, breach: `answered ${answer.code}, which it does not declare` })) }));
  koa.use(gatewayIdentity({ verifier, internalToken: deps.config.internalToken }));
  // Before the router: a slug that is not the platform's goes to a deployed service without route matching.
  koa.use(gatewayProxy({ db: deps.db, platformPaths: routes.map((route) => route.path) }));
  koa.use(router.routes());
  koa.use(router.allowedMethods({ throw: true }));
  koa.silent = true;
  return { koa, modules, routes, close: () => verifier.close() };
}
