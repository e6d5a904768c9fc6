import { Config } from '../lib/config';
import { Logger } from '../lib/logger';
import { Db } from '../data/db';
import { DockerHandle } from '../adapters/docker';
import { TemporalHandle } from '../temporal-config/client';

/** What activities are built from. Only the deployments worker is handed Docker. */
export interface WorkerDeps {
  config: Config;
  db: Db;
  logger: Logger;
  temporal: TemporalHandle;
  docker: DockerHandle | null;
}
