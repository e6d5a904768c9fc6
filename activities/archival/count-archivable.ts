import { LogType } from '../../domain/archival';
import { countArchivableRows } from '../../data/archival/archivable-rows';
import { ArchivalDeps } from './deps';

export interface CountArchivableInput {
  logType: LogType;
  siteId: string;
  cutoff: string;
}

/** What a dry run reports: the rows a real run would archive now. Reads only. */
export function countArchivable({ db }: ArchivalDeps) {
  return async (input: CountArchivableInput): Promise<number> => {
    return countArchivableRows(db, input);
  };
}
