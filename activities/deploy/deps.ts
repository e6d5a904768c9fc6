import Docker from 'dockerode';
import { Config } from '../../lib/config';
import { Db } from '../../data/db';
import { RunStatusOf } from '../../data/deploy/dead-deploys';

export interface DeployDeps {
  db: Db;
  docker: Docker;
  /** How a deploy run stands in Temporal: the reconcile settles the rows of runs that died unfinished. */
  runStatusOf: RunStatusOf;
  config: Pick<Config, 'dataDir' | 'deploy' | 'dockerHost' | 'edge' | 'api' | 'secrets'>;
}
