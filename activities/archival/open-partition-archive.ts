import { ExpiredPartition, openPartitionArchive as open } from '../../data/archival/partition-archives';
import { LogType } from '../../domain/archival';
import { ArchivalDeps } from './deps';
import { UnfinishedPartitionArchive } from './list-expired-partitions';

export interface OpenPartitionArchiveInput {
  workflowId: string;
  runId: string;
  logType: LogType;
  partition: ExpiredPartition;
}

/** Records that a month is archived whole, before anything of it is exported; a repeat answers the same archive. */
export function openPartitionArchive({ db }: ArchivalDeps) {
  return async (input: OpenPartitionArchiveInput): Promise<UnfinishedPartitionArchive> => {
    const archive = await open(db, input);
    return { partitionArchiveId: archive.id, name: archive.partition_name };
  };
}
