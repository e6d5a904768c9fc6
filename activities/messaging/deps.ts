import { Db } from '../../data/db';
import { MessagingConfig } from '../../adapters/messaging/send-message';
import { Config } from '../../lib/config';

/** What a send needs of the configuration: the transports' settings, the keys that open stored passwords, and the database to listen on. */
export type MessagingActivitiesConfig = MessagingConfig & Pick<Config, 'secrets' | 'databaseUrl'>;

export interface MessagingDeps {
  db: Db;
  config: MessagingActivitiesConfig;
}
