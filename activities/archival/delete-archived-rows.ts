import fs from 'node:fs';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { LOG_TABLES } from '../../data/archival/log-tables';
import { findPart, PART_IDS_TABLE, PART_TABLE } from '../../data/archival/parts';
import { ArchivalDeps } from './deps';
import { stagingFile } from './staging-files';

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
      throw ApplicationFailure.nonRetryable(`${part.file_name} is not confirmed by the sink; nothing is deleted`, 'PART_NOT_CONFIRMED');
    }
    const table = LOG_TABLES[part.log_type];
    const rowCount = Number(part.row_count);
    const batchSize = input.batchSize ?? 50000;
    const context = Context.current();
    const progress: DeleteProgress = { done: 0, deleted: 0, ...(context.info.heartbeatDetails as DeleteProgress | undefined) };
    const resumed = context.info.attempt > 1;
    while (progress.done < rowCount) {
      // Array slices are 1-based and inclusive.
      const deleted = await db.raw(
        `delete from ${table} t where t.id = any((select ids[? : ?] from ${PART_IDS_TABLE} where part_id = ?)::bigint[])`,
        [progress.done + 1, progress.done + batchSize, part.id],
      );
      progress.done += batchSize;
      progress.deleted += deleted.rowCount ?? 0;
      context.heartbeat(progress);
    }
    if (resumed || progress.deleted !== rowCount) {
      const { rows: left } = await db.raw(
        `select count(*) as n from ${table} t where t.id = any((select ids from ${PART_IDS_TABLE} where part_id = ?)::bigint[])`,
        [part.id],
      );
      if (Number(left[0].n) !== 0) throw new Error(`${left[0].n} rows of ${part.file_name} are still in ${table}`);
    }

    await db.transaction(async (trx) => {
      await trx(PART_TABLE).where({ id: part.id }).update({ state: 'DELETED', rows_deleted: rowCount, updated_at: trx.fn.now() });
      await trx(PART_IDS_TABLE).where({ part_id: part.id }).delete();
    });
    await fs.promises.rm(stagingFile(config.dataDir, part.id), { force: true });
    return { partId: part.id, rowsDeleted: rowCount };
  };
}
