import { Config } from '../../lib/config';
import { Db } from '../../data/db';

export interface ApprovalsDeps {
  db: Db;
  config: Pick<Config, 'api' | 'secrets'>;
}
