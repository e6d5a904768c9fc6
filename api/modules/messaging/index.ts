import { AppDeps } from '../../deps';
import { apiModule } from '../../http/module';
import { communicationRoutes } from './channel-routes';
import { emailRoutes } from './send-routes';
import { suppressionRoutes } from './suppression-routes';

/** Messaging: sends and their logs, the suppression lists, the email and SMS channel configurations, validate and process. */
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
    ],
    [...communicationRoutes(deps), ...emailRoutes(deps), ...suppressionRoutes(deps)],
  );
