import { AppDeps } from '../../deps';
import { apiModule } from '../../http/module';
import { callbackRoutes } from './callback-routes';
import { communicationRoutes } from './channel-routes';
import { emailRoutes } from './send-routes';
import { suppressionRoutes } from './suppression-routes';
import { unsubscribeRoutes } from './unsubscribe-routes';

/** Messaging: sends and their logs, the suppression lists and unsubscribe links, the email and SMS channel configurations, validate and process, each site's status callback. */
export const messagingModule = (deps: AppDeps) =>
  apiModule(
    'messaging',
    [
      '/api/email/send',
      '/api/email/logs',
      '/api/email/batches',
      '/api/email/suppressions',
      '/api/settings/email',
      '/api/settings/sms',
      '/api/settings/communication',
      '/api/settings/callbacks',
      '/u',
    ],
    [...communicationRoutes(deps), ...emailRoutes(deps), ...suppressionRoutes(deps), ...unsubscribeRoutes(deps), ...callbackRoutes(deps)],
  );
