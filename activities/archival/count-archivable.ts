import { LogType } from '../../domain/archival';
import { archivableRowsSql } from './archivable-rows';
import { ArchivalDeps } from './deps';

export interface CountArchivableInput {
  logType: LogType;
  siteId: string;
  cutoff: string;
}

/** What a dry run reports: the rows a real run would archive now. Reads only. */
export function countArchivable({ db }: ArchivalDeps) {
  return async (input: CountArchivableInput): Promise<number> => {
    const archivable = archivableRowsSql(input.logType, { siteId: ':siteId', cutoff: 'cast(:cutoff as timestamptz)' });
    const { rows } = await db.raw(`select count(*) as n from (${archivable}) a`, { siteId: input.siteId, cutoff: input.cutoff });
    return Number(rows[0].n);
  };
}
