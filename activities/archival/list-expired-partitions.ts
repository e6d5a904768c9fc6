import { expiredLogPartitions, ExpiredPartition, unfinishedPartitionArchives } from '../../data/archival/partition-archives';
import { LogType } from '../../domain/archival';
import { ArchivalDeps } from './deps';

export interface ListExpiredPartitionsInput {
  logType: LogType;
  /** The run's start, epoch ms: the cutoffs are the row path's. */
  runStart: number;
  /** Sites an earlier run's unfinished part blocks: their months wait for the row path. */
  excludeSites: string[];
}

/** The months of a log type that are past retention for every site in them: archived whole, then dropped. Reads only. */
export function listExpiredPartitions({ db }: ArchivalDeps) {
  return (input: ListExpiredPartitionsInput): Promise<ExpiredPartition[]> => expiredLogPartitions(db, input);
}

export interface UnfinishedPartitionArchive {
  partitionArchiveId: string;
  name: string;
}

/** Months an earlier run began to archive whole and did not drop: a new run finishes them first. */
export function listUnfinishedPartitionArchives({ db }: ArchivalDeps) {
  return async (input: { logType: LogType }): Promise<UnfinishedPartitionArchive[]> =>
    (await unfinishedPartitionArchives(db, input.logType)).map((archive) => ({ partitionArchiveId: archive.id, name: archive.partition_name }));
}
