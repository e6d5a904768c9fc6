import { unfinishedParts } from '../../data/archival/parts';
import { LogType } from '../../domain/archival';
import { ArchivalDeps } from './deps';

export interface ListUnfinishedPartsInput {
  logType: LogType;
  siteId?: string;
}

export interface UnfinishedPart {
  partId: string;
  siteId: string;
  state: 'EXPORTED' | 'CONFIRMED';
  rowCount: number;
}

/** Parts an earlier run recorded but did not finish: a new run completes them before exporting anything. */
export function listUnfinishedParts({ db }: ArchivalDeps) {
  return async (input: ListUnfinishedPartsInput): Promise<UnfinishedPart[]> => {
    const parts = await unfinishedParts(db, input);
    return parts.map((part) => ({ partId: part.id, siteId: part.site_id, state: part.state as UnfinishedPart['state'], rowCount: Number(part.row_count) }));
  };
}
