import { AppDeps } from '../../deps';
import { AnyRoute } from '../../http/route';
import { deployRoutes } from './deploy-routes';
import { docsRoutes } from './docs-routes';
import { serviceRoutes } from './service-routes';

/** The infra module: deploys, the service registry, and the docs of deployed services. The gateway route is `gateway.ts`. */
export function infraRoutes(deps: AppDeps): AnyRoute[] {
  return [...deployRoutes(deps), ...serviceRoutes(deps), ...docsRoutes(deps)];
}
