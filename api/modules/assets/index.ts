import { AppDeps } from '../../deps';
import { apiModule } from '../../http/module';
import { assetRoutes } from './routes';

/** Assets: upload, the pickers' list, download, delete, and the archive sink. */
export const assetsModule = (deps: AppDeps) => apiModule('assets', ['/api/assets'], assetRoutes(deps));
