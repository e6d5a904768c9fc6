import { Config } from '../lib/config';
import { Logger } from '../lib/logger';
import { Db } from '../data/db';
import { DockerHandle } from '../adapters/docker';
import { AssetStorage } from '../data/assets/storage';
import type { ArchiveSink } from './storage';
import { TemporalHandle } from '../temporal-config/client';
import { HostResolver } from '../adapters/messaging/outbound';

/** What the API is built from; tests build their own against the real components. */
export interface AppDeps {
  config: Config;
  db: Db;
  temporal: TemporalHandle;
  docker: DockerHandle;
  storage: AssetStorage;
  /** Where archive files the workers upload are kept (ARCHIVE_SINK). */
  archives: ArchiveSink;
  logger: Logger;
  /** How outbound names are resolved for the guard: the system's resolver unless given (a test's own, for rebinding). */
  resolveHost?: HostResolver;
}
