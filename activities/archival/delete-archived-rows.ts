import fs from 'node:fs';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { LOG_TABLES } from '../../data/archival/log-tables';
import { findPart, PART_ROW_TABLE, PART_TABLE } from '../../data/archival/parts';
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

/**
 * Deletes exactly the rows a confirmed part holds, by primary key, in batches that each commit. Resumes
 * after the last batch a heartbeat recorded; a batch deleted again deletes nothing. Ends by checking that
 * none of the part's rows remain, so rows deleted equal rows exported.
 */
export function deleteArchivedRows({ db, config }: ArchivalDeps) {
  return async (input: DeleteArchivedRowsInput): Promise<DeletedRows> => {
    const part = await findPart(db, input.partId);
    if (part.state === 'DELETED') return { partId: part.id, rowsDeleted: Number(part.rows_deleted) };
    if (part.state !== 'CONFIRMED') {
      throw ApplicationFailure.nonRetryable(`${part.file_name} is not confirmed by the sink; nothing is deleted`, 'PART_NOT_CONFIRMED');
    }
    const table = LOG_TABLES[part.log_type];
    const batchSize = input.batchSize ?? 50000;
    const context = Context.current();
    let after = Number((context.info.heartbeatDetails as { after?: number } | undefined)?.after ?? 0);
    for (;;) {
      const { rows } = await db.raw(
        `with batch as (
           select row_id from ${PART_ROW_TABLE} where part_id = ? and row_id > ? order by row_id limit ?
         ), gone as (
           delete from ${table} t using batch where t.id = batch.row_id returning t.id
         )
         select (select max(row_id) from batch) as last_id`,
        [part.id, after, batchSize],
      );
      const lastId = rows[0].last_id;
      if (lastId === null) break;
      after = Number(lastId);
      context.heartbeat({ after });
    }
    const { rows: left } = await db.raw(
      `select count(*)::bigint as n from ${table} t join ${PART_ROW_TABLE} r on r.row_id = t.id where r.part_id = ?`,
      [part.id],
    );
    if (Number(left[0].n) !== 0) throw new Error(`${left[0].n} rows of ${part.file_name} are still in ${table}`);

    await db.transaction(async (trx) => {
      await trx(PART_TABLE).where({ id: part.id }).update({ state: 'DELETED', rows_deleted: part.row_count, updated_at: trx.fn.now() });
      await trx(PART_ROW_TABLE).where({ part_id: part.id }).delete();
    });
    await fs.promises.rm(stagingFile(config.dataDir, part.id), { force: true });
    return { partId: part.id, rowsDeleted: Number(part.row_count) };
  };
}
