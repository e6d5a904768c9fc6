import { Registry } from 'prom-client';
import { AppDeps } from '../../deps';
import { apiModule } from '../../http/module';
import { operationsRoutes } from './routes';

/** Operations: liveness, readiness, metrics, the OpenAPI document, who the caller is, and the scheduled jobs' log. */
export const operationsModule = (args: { deps: AppDeps; metrics: Registry; openapi: () => unknown }) =>
  apiModule('operations', ['/healthz', '/readyz', '/metrics', '/api/openapi.json', '/api/directory/me', '/api/settings/scheduler-job-logs'], operationsRoutes(args));
