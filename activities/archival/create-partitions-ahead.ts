import { LogType } from '../../domain/archival';
import { createLogPartitionsAhead } from '../../data/archival/log-partitions';
import { ArchivalDeps } from './deps';

export interface CreatePartitionsAheadInput {
  logType: LogType;
}

/** The current month's partition of a log type's table and those of the months ahead, created when missing. Safe to repeat. */
export function createPartitionsAhead({ db }: ArchivalDeps) {
  return async (input: CreatePartitionsAheadInput): Promise<number> => createLogPartitionsAhead(db, { logType: input.logType });
}
