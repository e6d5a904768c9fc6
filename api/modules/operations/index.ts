import { Registry } from 'prom-client';
import { AppDeps } from '../../deps';
import { apiModule } from '../../http/module';
import { operationsRoutes } from './routes';

/** Operations: liveness, readiness, metrics, the OpenAPI document, and who the caller is. */
export const operationsModule = (args: { deps: AppDeps; metrics: Registry; openapi: () => unknown }) =>
  apiModule('operations', ['/healthz', '/readyz', '/metrics', '/api/openapi.json', '/api/directory/me'], operationsRoutes(args));
