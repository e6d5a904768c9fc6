import { Context } from '@temporalio/activity';
import { finalFailure } from '../failures';
import { LOG_TABLES } from '../../data/archival/log-tables';
import { deletePartSlice, findPart, markPartDeleted, partRowsLeft } from '../../data/archival/parts';
import { ArchivalDeps } from './deps';
import { removeStagedFiles } from '../../data/archival/staging-files';

export interface DeleteArchivedRowsInput {
  partId: string;
  batchSize?: number;
}

export interface DeletedRows {
  partId: string;
  rowsDeleted: number;
}

/** What a heartbeat keeps: how many of the part's ids are done, and how many rows those batches deleted. */
interface DeleteProgress {
  done: number;
  deleted: number;
}

/**
 * Deletes exactly the rows a confirmed part holds, by primary key, in batches of its id array that each
 * commit. Resumes after the last batch a heartbeat recorded; a batch deleted again deletes nothing. Rows
 * deleted must equal rows exported: counted when every batch was seen to delete, checked against the table
 * when a resumed attempt cannot know what an unrecorded batch deleted.
 */
export function deleteArchivedRows({ db, config }: ArchivalDeps) {
  return async (input: DeleteArchivedRowsInput): Promise<DeletedRows> => {
    const part = await findPart(db, input.partId);
    if (part.state === 'DELETED') return { partId: part.id, rowsDeleted: Number(part.rows_deleted) };
    if (part.state !== 'CONFIRMED') {
      throw finalFailure('PART_NOT_CONFIRMED', `${part.file_name} is not confirmed by the sink; nothing is deleted`);
    }
    const table = LOG_TABLES[part.log_type];
    const rowCount = Number(part.row_count);
    const batchSize = input.batchSize ?? 50000;
    const context = Context.current();
    const progress: DeleteProgress = { done: 0, deleted: 0, ...(context.info.heartbeatDetails as DeleteProgress | undefined) };
    const resumed = context.info.attempt > 1;
    while (progress.done < rowCount) {
      // Array slices are 1-based and inclusive.
      const deleted = await deletePartSlice(db, { table, partId: part.id, from: progress.done + 1, to: progress.done + batchSize });
      progress.done += batchSize;
      progress.deleted += deleted;
      context.heartbeat(progress);
    }
    if (resumed || progress.deleted !== rowCount) {
      const left = await partRowsLeft(db, { table, partId: part.id });
      if (left !== 0) throw new Error(`${left} rows of ${part.file_name} are still in ${table}`);
    }

    await markPartDeleted(db, { partId: part.id, rowsDeleted: rowCount });
    await removeStagedFiles(config.dataDir, part.id, part.format);
    return { partId: part.id, rowsDeleted: rowCount };
  };
}
