import { AppDeps } from '../../deps';
import { apiModule } from '../../http/module';
import { COMPONENT_TYPES } from '../../../data/content/component-types';
import { RELEASE_COLLECTION } from '../../../domain/approvals';
import { componentRoutes } from './collection-routes';
import { publicRoutes } from './public-routes';
import { releaseRoutes } from './release-routes';
import { retentionRoutes } from './retention-routes';
import { siteSettingsRoutes } from './site-settings-routes';
import { soapInvokeRoutes } from './soap-invoke';
import { templatePreviewRoutes } from './template-preview';

/** Content: every versioned type's collection (pages to workflow definitions), releases, the SOAP tracker, site settings and the public runtime. */
export const contentModule = (deps: AppDeps) =>
  apiModule(
    'content',
    [...COMPONENT_TYPES.map((type) => type.collection), '/api/content/revision-retention', '/api/content/sites', RELEASE_COLLECTION, '/api/public'],
    [
      ...componentRoutes(deps),
      ...soapInvokeRoutes(deps),
      ...templatePreviewRoutes(deps),
      ...publicRoutes(deps),
      ...retentionRoutes(deps),
      ...siteSettingsRoutes(deps),
      ...releaseRoutes(deps),
    ],
  );
