import { Context } from '@temporalio/activity';
import { msUntilByDatabase } from '../../data/approvals/scheduled-changes';
import { Db } from '../../data/db';
import { retryableFailure } from '../failures';

/**
 * The longest a scheduled change's activity waits in one attempt. The run wakes two seconds early, so a
 * longer wait means the database's clock is behind the workflow's: the attempt fails (and is tried again,
 * with backoff) rather than outlive its 30 s timeout while another attempt starts.
 */
const LONGEST_WAIT_MS = 10000;

/** Waits until the database's clock reaches `dueAt`, before a scheduled change's transaction. */
export async function untilDueByDatabase(db: Db, dueAt: string): Promise<void> {
  for (;;) {
    const leftMs = await msUntilByDatabase(db, dueAt);
    if (leftMs <= 0) return;
    if (leftMs > LONGEST_WAIT_MS) {
      throw retryableFailure('SERVICE_UNAVAILABLE', `The database's clock is ${Math.round(leftMs / 1000)} s short of the due time ${dueAt}; waiting for it.`);
    }
    await Context.current().sleep(Math.ceil(leftMs));
  }
}
