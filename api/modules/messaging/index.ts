import { AppDeps } from '../../deps';
import { apiModule } from '../../http/module';
import { communicationRoutes } from './channel-routes';
import { emailRoutes } from './send-routes';

/** Messaging: sends and their logs, the email and SMS channel configurations, validate and process. */
export const messagingModule = (deps: AppDeps) =>
  apiModule(
    'messaging',
    ['/api/email/send', '/api/email/logs', '/api/email/batches', '/api/settings/email', '/api/settings/sms', '/api/settings/communication'],
    [...communicationRoutes(deps), ...emailRoutes(deps)],
  );
