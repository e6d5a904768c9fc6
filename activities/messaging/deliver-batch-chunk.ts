import { Context } from '@temporalio/activity';
import { allPendingOfBatch, batchVariables, countPendingOfBatch as pendingCount, markFailed, pendingOfBatch } from '../../data/messaging/email-logs';
import { activeConfig } from '../../data/messaging/channel-configs';
import { deliverLoggedEmail, loggedTemplate } from './deliver-logged-email';
import { MessagingDeps } from './deps';

const PARALLEL_SENDS = 10;

export interface BatchChunkInput {
  batchId: string;
  /** Rows with a larger id are this chunk's. */
  afterId: string;
  limit: number;
}

export interface BatchChunk {
  lastId: string;
  /** The chunk held fewer rows than the limit: this pass over the batch is over. */
  passDone: boolean;
  delivered: number;
  failed: number;
  retrying: number;
  /**
   * The relay could not be reached: the chunk stopped at the slice that met it (its rows still PENDING are
   * gone over again from `lastId`), so that an outage costs a wait, not a pass.
   */
  relayUnreachable: boolean;
}

/**
 * Delivers up to `limit` PENDING rows of a bulk send, in id order, a few at a time over the pooled
 * transport. Each row is marked the moment its message is handed over, and the heartbeat carries the last
 * finished id, so a retry after a killed worker goes on where it stopped: only the few messages in flight
 * at that moment can be sent a second time, and every row still ends in exactly one final state.
 */
export function deliverBatchChunk({ db, config }: MessagingDeps) {
  return async (input: BatchChunkInput): Promise<BatchChunk> => {
    const resumedAfter = (Context.current().info.heartbeatDetails as string | undefined) ?? input.afterId;
    const rows = await pendingOfBatch(db, { batchId: input.batchId, afterId: resumedAfter, limit: input.limit });
    const chunk: BatchChunk = { lastId: resumedAfter, passDone: rows.length < input.limit, delivered: 0, failed: 0, retrying: 0, relayUnreachable: false };
    // Every row of a batch has the same template revision; the active configuration is read once a chunk.
    const preloaded =
      rows.length > 0 ? { template: await loggedTemplate(db, rows[0]), channel: await activeConfig(db, 'EMAIL'), batchVariables: await batchVariables(db, input.batchId) } : {};
    for (let start = 0; start < rows.length; start += PARALLEL_SENDS) {
      const slice = rows.slice(start, start + PARALLEL_SENDS);
      const stillWorking = () => Context.current().heartbeat(chunk.lastId);
      const outcomes = await Promise.all(slice.map((row) => deliverLoggedEmail(db, config, row, preloaded, stillWorking)));
      for (const { outcome } of outcomes) {
        if (outcome === 'SUCCESS') chunk.delivered++;
        else if (outcome === 'FAILED') chunk.failed++;
        else chunk.retrying++;
      }
      if (outcomes.some((delivery) => delivery.unreachable)) {
        chunk.relayUnreachable = true;
        chunk.passDone = false;
        return chunk;
      }
      chunk.lastId = String(slice[slice.length - 1].id);
      Context.current().heartbeat(chunk.lastId);
    }
    return chunk;
  };
}

/** After the last pass: rows still PENDING (temporary failures every time) become FAILED with their last reason. */
export function failRemainingOfBatch({ db }: MessagingDeps) {
  return async (input: { batchId: string }): Promise<number> => {
    const rows = await allPendingOfBatch(db, input.batchId);
    for (const row of rows) await markFailed(db, row.id, row.error ?? 'not delivered after every attempt');
    return rows.length;
  };
}

export function countPendingOfBatch({ db }: MessagingDeps) {
  return async (input: { batchId: string }): Promise<number> => {
    return pendingCount(db, input.batchId);
  };
}
