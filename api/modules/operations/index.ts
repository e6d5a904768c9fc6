import { Registry } from 'prom-client';
import { AppDeps } from '../../deps';
import { apiModule } from '../../http/module';
import { operationsRoutes } from './routes';
import { TEMPORAL_CODEC_PREFIX, temporalCodecRoutes } from './temporal-codec';

/** Operations: liveness, readiness, metrics, the OpenAPI document, who the caller is, the scheduled jobs' log, and Temporal's codec endpoint. */
export const operationsModule = (args: { deps: AppDeps; metrics: Registry; openapi: () => unknown }) =>
  apiModule(
    'operations',
    ['/healthz', '/readyz', '/metrics', '/api/openapi.json', '/api/directory/me', '/api/settings/scheduler-job-logs', TEMPORAL_CODEC_PREFIX],
    [...operationsRoutes(args), ...temporalCodecRoutes(args.deps)],
  );
