import { Registry } from 'prom-client';
import { AppDeps } from '../../deps';
import { apiModule } from '../../http/module';
import { operationsRoutes } from './routes';
import { TEMPORAL_CODEC_PREFIX, temporalCodecRoutes } from './temporal-codec';
import { healthScreenRoutes } from './health-screen';
import { fairnessRoutes } from './fairness-routes';
import { PlatformReading } from './platform-metrics';

/**
 * Operations: liveness, readiness, metrics, the OpenAPI document, who the caller is, the scheduled jobs' log,
 * the console's health screen and links, each site's share of the task queues, and Temporal's codec endpoint.
 */
export const operationsModule = (args: { deps: AppDeps; metrics: Registry; reading: PlatformReading; openapi: () => unknown }) =>
  apiModule(
    'operations',
    [
      '/healthz',
      '/readyz',
      '/metrics',
      '/api/openapi.json',
      '/api/directory/me',
      '/api/settings/scheduler-job-logs',
      '/api/settings/health',
      '/api/settings/links',
      '/api/settings/fairness',
      TEMPORAL_CODEC_PREFIX,
    ],
    [...operationsRoutes(args), ...healthScreenRoutes(args), ...fairnessRoutes(args.deps), ...temporalCodecRoutes(args.deps)],
  );
