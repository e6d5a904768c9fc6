import { Db } from '../../data/db';
import { MessagingConfig } from './transports/send-message';

export interface MessagingDeps {
  db: Db;
  config: MessagingConfig;
}
