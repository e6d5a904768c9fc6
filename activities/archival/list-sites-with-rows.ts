import { sitesWithRows } from '../../data/archival/log-tables';
import { LogType } from '../../domain/archival';
import { ArchivalDeps } from './deps';

export interface ListSitesWithRowsInput {
  logType: LogType;
  siteId?: string;
}

/** The sites that have rows of this log type (only `siteId` when given). */
export function listSitesWithRows({ db }: ArchivalDeps) {
  return async (input: ListSitesWithRowsInput): Promise<string[]> => sitesWithRows(db, input);
}
