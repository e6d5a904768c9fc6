import { Config } from '../../lib/config';
import { Db } from '../../data/db';

export interface ArchivalDeps {
  db: Db;
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'api' | 'secrets' | 'archive'>;
}
