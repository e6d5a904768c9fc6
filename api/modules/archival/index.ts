import { AppDeps } from '../../deps';
import { apiModule } from '../../http/module';
import { archivalRoutes } from './routes';

/** Archival: retention policies, on-demand archive runs and their reports. */
export const archivalModule = (deps: AppDeps) => apiModule('archival', ['/api/settings/archive-policies', '/api/settings/archive-runs'], archivalRoutes(deps));
