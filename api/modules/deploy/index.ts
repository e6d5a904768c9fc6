import { AppDeps } from '../../deps';
import { apiModule } from '../../http/module';
import { deployRoutes } from './deploy-routes';
import { docsRoutes } from './docs-routes';
import { rolloutRoutes } from './rollout-routes';
import { limitsRoutes } from './limits-routes';
import { domainRoutes } from './domain-routes';
import { notifyRoutes } from './notify-routes';
import { serviceRoutes } from './service-routes';

/** Deploy: deploys, the service registry, and the docs of deployed services. The gateway is `gateway.ts`. */
export const deployModule = (deps: AppDeps) =>
  apiModule(
    'deploy',
    ['/api/infra', '/api/docs', '/.well-known/acme-challenge'],
    [
      ...deployRoutes(deps),
      ...serviceRoutes(deps),
      ...rolloutRoutes(deps),
      ...limitsRoutes(deps),
      ...domainRoutes(deps),
      ...notifyRoutes(deps),
      ...docsRoutes(deps),
    ],
  );
