import { Context } from '@temporalio/activity';
import {
  allPendingOfBatch,
  countPendingOfBatch as pendingCount,
  EmailLogRow,
  markAllDelivered,
  markFailed,
  pendingOfBatch,
  startAttempts,
} from '../../data/messaging/email-logs';
import { batchVariables } from '../../data/messaging/email-batches';
import { activeConfigs } from '../../data/messaging/channel-configs';
import { whenDatabaseIsBack } from '../../data/db-errors';
import { LoggedDelivery, loggedTemplate, Preloaded, recordFailedAttempt, recordWaitMs, sendLoggedEmail } from './deliver-logged-email';
import { MessagingDeps } from './deps';

// A slice: its attempts counted in one statement, sent side by side over the pooled transport, then recorded
// in one statement. Two lanes take slices in turn, so that one lane's statements overlap the other's sends
// and the pool is not left idle while a slice is counted or recorded. What a killed worker can send twice is
// the slices in flight: LANES x SLICE_SIZE messages, twenty, as when one lane sent slices of twenty.
const SLICE_SIZE = 10;
const LANES = 2;

export interface BatchChunkInput {
  batchId: string;
  /** Rows with a larger id are this chunk's. */
  afterId: string;
  limit: number;
  /**
   * Stop at a slice that found the relay unreachable, for the workflow to wait for it. Set by workflow code
   * that waits; a run of older code never sets it, and so never calls again and again from the same id.
   */
  stopOnUnreachable?: boolean;
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
 * Delivers up to `limit` PENDING rows of a bulk send, in id order, a slice of a few at a time over the
 * pooled transport, two slices at once. A slice's rows are marked the moment its messages are handed over,
 * in one statement (two per slice, not two per row: bench/email went from about 0.65 of its baseline to
 * 0.85), and the heartbeat carries the last id before which every slice is finished, so a retry after a
 * killed worker goes on where it stopped: only the slices in flight at that moment can be sent a second
 * time, and every row still ends in exactly one final state.
 */
export function deliverBatchChunk({ db, config }: MessagingDeps) {
  return async (input: BatchChunkInput): Promise<BatchChunk> => {
    const resumedAfter = (Context.current().info.heartbeatDetails as string | undefined) ?? input.afterId;
    const rows = await pendingOfBatch(db, { batchId: input.batchId, afterId: resumedAfter, limit: input.limit });
    const chunk: BatchChunk = { lastId: resumedAfter, passDone: rows.length < input.limit, delivered: 0, failed: 0, retrying: 0, relayUnreachable: false };
    // Every row of a batch has the same template revision; the active configurations are read once a chunk.
    const preloaded =
      rows.length > 0
        ? { template: await loggedTemplate(db, rows[0]), channels: await activeConfigs(db, 'EMAIL'), batchVariables: await batchVariables(db, input.batchId) }
        : {};
    // A slice can take a while (a relay that does not answer, a database that is away): the heartbeat goes
    // on meanwhile, so that the attempt is not timed out and retried while its sends are still in flight.
    const heartbeat = setInterval(() => Context.current().heartbeat(chunk.lastId), 5000);
    const slices = Array.from({ length: Math.ceil(rows.length / SLICE_SIZE) }, (_, index) => rows.slice(index * SLICE_SIZE, (index + 1) * SLICE_SIZE));
    // Slices end out of order: the heartbeat's id is the last of the slices finished without a gap before them.
    const finished: boolean[] = [];
    let finishedBefore = 0;
    let next = 0;
    // A lane takes no further slice once one found the relay unreachable, or a record failed.
    let stopAt = slices.length;
    const lane = async () => {
      for (let index = next++; index < stopAt; index = next++) {
        const slice = slices[index];
        let outcomes;
        try {
          outcomes = await deliverSlice(db, config, slice, preloaded);
        } catch (error) {
          stopAt = Math.min(stopAt, index);
          throw error;
        }
        for (const { outcome } of outcomes) {
          if (outcome === 'SUCCESS') chunk.delivered++;
          else if (outcome === 'FAILED') chunk.failed++;
          else chunk.retrying++;
        }
        // The relay is down, not one message: it was not reached for some, and took none of the slice. This
        // pass goes on from the slice before it, once the workflow has waited.
        if (input.stopOnUnreachable && outcomes.some((delivery) => delivery.unreachable) && !outcomes.some((delivery) => delivery.outcome === 'SUCCESS')) {
          chunk.relayUnreachable = true;
          chunk.passDone = false;
          stopAt = Math.min(stopAt, index);
          return;
        }
        finished[index] = true;
        while (finishedBefore < stopAt && finished[finishedBefore]) finishedBefore++;
        if (finishedBefore > 0) chunk.lastId = String(slices[finishedBefore - 1][slices[finishedBefore - 1].length - 1].id);
        Context.current().heartbeat(chunk.lastId);
      }
    };
    try {
      // Every lane ends its slice before the attempt may: a send in flight must be recorded, not sent again by a retry.
      const lanes = await Promise.allSettled(Array.from({ length: LANES }, lane));
      const refused = lanes.find((result) => result.status === 'rejected');
      if (refused) throw refused.reason;
    } finally {
      clearInterval(heartbeat);
    }
    return chunk;
  };
}

/**
 * One slice: an attempt counted on every row still PENDING, their messages handed over side by side, then
 * the delivered rows marked at once and each failure recorded on its row. A row already final is not sent,
 * nor one to an address on its site's suppression list (that one ends `suppressed` as the attempt starts).
 */
async function deliverSlice(
  db: MessagingDeps['db'],
  config: MessagingDeps['config'],
  slice: EmailLogRow[],
  preloaded: Preloaded,
): Promise<Array<{ outcome: LoggedDelivery; unreachable?: boolean }>> {
  const { claimed, suppressed } = await startAttempts(
    db,
    slice.map((row) => row.id),
    preloaded.channels?.[0]?.id ?? null,
  );
  const sends = await Promise.all(
    slice.map(async (row) => {
      const attempt = claimed.get(String(row.id));
      return attempt ? { row, attempt, sent: await sendLoggedEmail(db, config, row, preloaded, attempt.boundTo) } : { row, attempt, sent: null };
    }),
  );
  const delivered = sends.flatMap(({ row, sent }) =>
    sent?.delivered ? [{ id: row.id, subject: sent.rendered.subject, missingVariables: sent.rendered.missingVariables, channel: sent.channel }] : [],
  );
  // Sent: the record waits for a database that is away rather than fail the attempt, whose retry would mail
  // these recipients a second time.
  await whenDatabaseIsBack(() => markAllDelivered(db, delivered), { maxMs: recordWaitMs() });
  // Every failure is recorded before the attempt may end: one that fails must not leave the others unrecorded.
  const recorded = await Promise.allSettled(
    sends.map(async ({ row, attempt, sent }) =>
      sent && !sent.delivered
        ? recordFailedAttempt(db, row.id, sent.failure, Boolean(attempt?.boundTo))
        : { outcome: suppressed.has(String(row.id)) ? ('FAILED' as const) : ('SUCCESS' as const) },
    ),
  );
  const refused = recorded.find((result) => result.status === 'rejected');
  if (refused) throw refused.reason;
  return recorded.map((result) => (result as PromiseFulfilledResult<{ outcome: LoggedDelivery; unreachable?: boolean }>).value);
}

/** After the last pass: rows still PENDING (temporary failures every time) become FAILED (`temporary-failure`) with their last reason. */
export function failRemainingOfBatch({ db }: MessagingDeps) {
  return async (input: { batchId: string }): Promise<number> => {
    const rows = await allPendingOfBatch(db, input.batchId);
    for (const row of rows) await markFailed(db, row.id, row.error ?? 'not delivered after every attempt', 'temporary-failure');
    return rows.length;
  };
}

export function countPendingOfBatch({ db }: MessagingDeps) {
  return async (input: { batchId: string }): Promise<number> => {
    return pendingCount(db, input.batchId);
  };
}
