import { Config } from '../lib/config';
import { Logger } from '../lib/logger';
import { Db } from '../data/db';
import { DockerHandle } from '../data/docker';
import { AssetStorage } from '../data/assets/storage';
import { TemporalHandle } from '../temporal-config/client';

/** What the API is built from; tests build their own against the real components. */
export interface AppDeps {
  config: Config;
  db: Db;
  temporal: TemporalHandle;
  docker: DockerHandle;
  storage: AssetStorage;
  logger: Logger;
}
