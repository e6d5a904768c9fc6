import { Db } from '../../data/db';
import { MessagingConfig } from '../../data/messaging/transports/send-message';

export interface MessagingDeps {
  db: Db;
  config: MessagingConfig;
}
