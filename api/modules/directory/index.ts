import { AppDeps } from '../../deps';
import { apiModule } from '../../http/module';
import { devSignInRoutes } from './dev-sign-in';
import { directoryRoutes } from './routes';

/** Directory: users with their roles, sites and locale; in development, signing in as one of them. */
export const directoryModule = (deps: AppDeps) =>
  apiModule('directory', ['/api/directory/users', '/api/directory/dev-sign-in'], [...directoryRoutes(deps), ...devSignInRoutes(deps)]);
