import { AppDeps } from '../../deps';
import { apiModule } from '../../http/module';
import { directoryRoutes } from './routes';

/** Directory: users with their roles, sites and locale. */
export const directoryModule = (deps: AppDeps) => apiModule('directory', ['/api/directory/users'], directoryRoutes(deps));
