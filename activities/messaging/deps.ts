import { Db } from '../../data/db';
import { MessagingConfig } from '../../adapters/messaging/send-message';
import { Config } from '../../lib/config';

/** What a send needs of the configuration: the transports' settings, and the keys that open stored passwords. */
export type MessagingActivitiesConfig = MessagingConfig & Pick<Config, 'secretsKey' | 'secretsKeyPrevious'>;

export interface MessagingDeps {
  db: Db;
  config: MessagingActivitiesConfig;
}
