import { Context } from '@temporalio/activity';
import { dropArchivedPartition as drop, DroppedPartition, findPartitionArchive, partsOfPartitionArchive } from '../../data/archival/partition-archives';
import { removeStagedFiles } from '../../data/archival/staging-files';
import { ArchivalDeps } from './deps';

/** Drops a detached month and records it, in one transaction (see `dropArchivedPartition`); a repeat answers what was dropped. */
export function dropArchivedPartition({ db, config }: ArchivalDeps) {
  return async (input: { partitionArchiveId: string }): Promise<DroppedPartition> => {
    const archive = await findPartitionArchive(db, input.partitionArchiveId);
    // The drop may wait on the lock another attempt holds: the heartbeat says the wait is alive.
    const heartbeat = setInterval(() => Context.current().heartbeat({ stage: 'drop' }), 1000);
    try {
      const dropped = await drop(db, archive);
      for (const part of await partsOfPartitionArchive(db, archive.id)) await removeStagedFiles(config.dataDir, part.id, part.format);
      return dropped;
    } finally {
      clearInterval(heartbeat);
    }
  };
}
