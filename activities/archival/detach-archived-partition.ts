import { Context } from '@temporalio/activity';
import { finalFailure } from '../failures';
import {
  advancePartitionArchive,
  detachPartition,
  findPartitionArchive,
  partitionAttachment,
  partsOfPartitionArchive,
} from '../../data/archival/partition-archives';
import { ArchivalDeps } from './deps';

/**
 * Detaches a month whose every part the sink confirmed, then records it DETACHED. Safe to repeat: a detach
 * that was cut off half-way is finished (FINALIZE), one that is done is only recorded.
 */
export function detachArchivedPartition({ db }: ArchivalDeps) {
  return async (input: { partitionArchiveId: string }): Promise<void> => {
    const archive = await findPartitionArchive(db, input.partitionArchiveId);
    if (archive.state === 'DETACHED' || archive.state === 'DROPPED') return;
    const unconfirmed = (await partsOfPartitionArchive(db, archive.id)).filter((part) => part.state !== 'CONFIRMED');
    if (archive.state !== 'EXPORTED' || unconfirmed.length > 0) {
      throw finalFailure('PART_NOT_CONFIRMED', `${archive.partition_name} is not detached: not every part of it is confirmed by the sink`);
    }
    const attachment = await partitionAttachment(db, archive.partition_name);
    if (attachment === 'MISSING') {
      throw finalFailure('PARTITION_MISSING', `${archive.partition_name} is gone before it was detached: its archive parts are kept, nothing is dropped`);
    }
    if (attachment !== 'DETACHED') {
      // DETACH CONCURRENTLY waits for every query that uses the log table: the heartbeat says the wait is alive.
      const heartbeat = setInterval(() => Context.current().heartbeat({ stage: 'detach' }), 1000);
      try {
        await detachPartition(db, { logType: archive.log_type, name: archive.partition_name, finalize: attachment === 'DETACH_PENDING' });
      } finally {
        clearInterval(heartbeat);
      }
    }
    await advancePartitionArchive(db, { id: archive.id, from: 'EXPORTED', to: 'DETACHED' });
  };
}
