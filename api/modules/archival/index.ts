import { AppDeps } from '../../deps';
import { apiModule } from '../../http/module';
import { archivalRoutes } from './routes';

/** Archival: retention policies, on-demand archive runs and their reports, archive restores, legal holds, the archive store's credentials. */
export const archivalModule = (deps: AppDeps) =>
  apiModule(
    'archival',
    [
      '/api/settings/archive-policies',
      '/api/settings/archive-runs',
      '/api/settings/archive-restores',
      '/api/settings/archive-holds',
      '/api/settings/archive-sink',
    ],
    archivalRoutes(deps),
  );
