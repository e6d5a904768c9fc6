import { AppDeps } from '../../deps';
import { apiModule } from '../../http/module';
import { devSignInRoutes } from './dev-sign-in';
import { directoryRoutes } from './routes';
import { signInRoutes } from './sign-in';
import { TokenVerifier } from '../../http/identity';

/** Directory: users with their roles, sites and locale; signing in (in development, as one of them; or through the organisation's identity provider). */
export const directoryModule = (deps: AppDeps, verifier: TokenVerifier) =>
  apiModule(
    'directory',
    ['/api/directory/users', '/api/directory/dev-sign-in', '/api/directory/sign-in-options', '/api/directory/sign-in'],
    [...directoryRoutes(deps), ...devSignInRoutes(deps), ...signInRoutes(deps, verifier)],
  );
