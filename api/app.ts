import Router from '@koa/router';
import Koa from 'koa';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { AppDeps } from './deps';
import { createTokenVerifier, gatewayIdentity } from './http/identity';
import { buildOpenApi } from './http/openapi';
import { problemMiddleware } from './http/problem';
import { requestContext } from './http/request-context';
import { AnyRoute, mountRoutes } from './http/route';
import { assetRoutes } from './modules/assets/routes';
import { componentRoutes } from './modules/content/collection-routes';
import { publicRoutes } from './modules/content/public-routes';
import { directoryRoutes } from './modules/directory/routes';
import { emailRoutes } from './modules/email/routes';
import { gatewayProxy } from './modules/infra/gateway';
import { infraRoutes } from './modules/infra/routes';
import { operationsRoutes } from './modules/operations/routes';
import { communicationRoutes } from './modules/settings/channel-routes';
import { settingsRoutes } from './modules/settings/routes';
import { workflowRoutes } from './modules/workflow/routes';

export interface App {
  koa: Koa;
  routes: AnyRoute[];
  close(): void;
}

/** Builds the API (gateway and every platform module) from its dependencies; does not listen. */
export function createApp(deps: AppDeps): App {
  const koa = new Koa({ proxy: false });
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const verifier = createTokenVerifier({ config: deps.config, logger: deps.logger });

  const routes: AnyRoute[] = [];
  let openapi: Record<string, unknown> | null = null;
  routes.push(
    ...operationsRoutes({ deps, metrics, openapi: () => (openapi ??= buildOpenApi(routes)) }),
    ...directoryRoutes(deps),
    ...assetRoutes(deps),
    ...settingsRoutes(deps),
    ...communicationRoutes(deps),
    ...emailRoutes(deps),
    ...infraRoutes(deps),
    ...componentRoutes(deps),
    ...workflowRoutes(deps),
    ...publicRoutes(deps),
  );

  const router = new Router();
  mountRoutes(router, routes);

  koa.use(requestContext({ logger: deps.logger, metrics }));
  koa.use(problemMiddleware());
  koa.use(gatewayIdentity({ verifier, internalToken: deps.config.internalToken }));
  // Before the router: a slug that is not the platform's goes to a deployed service without route matching.
  koa.use(gatewayProxy({ db: deps.db, platformPaths: routes.map((route) => route.path) }));
  koa.use(router.routes());
  koa.use(router.allowedMethods({ throw: true }));
  koa.silent = true;
  return { koa, routes, close: () => verifier.close() };
}
