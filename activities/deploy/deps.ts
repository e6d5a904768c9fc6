import Docker from 'dockerode';
import { Config } from '../../lib/config';
import { Db } from '../../data/db';

export interface DeployDeps {
  db: Db;
  docker: Docker;
  config: Pick<
    Config,
    'dataDir' | 'deployBaseImage' | 'deployNetwork' | 'deployScope' | 'deployHostBind' | 'deployMemoryMb' | 'deployPidsLimit'
  >;
}
