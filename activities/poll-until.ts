import { Context, sleep } from '@temporalio/activity';
import { askUntil } from '../lib/poll-until';

/**
 * `askUntil` for an activity: between two asks it heartbeats, so Temporal knows it is alive, and sleeps
 * `everyMs` (a number, or a function for a pace that changes). The sleep is the activity's own: a cancelled
 * activity stops at once.
 */
export function pollUntil<T>(everyMs: number | (() => number), check: (attempt: number) => Promise<T | undefined>): Promise<T> {
  return askUntil(check, async (attempt) => {
    Context.current().heartbeat({ attempt });
    await sleep(typeof everyMs === 'number' ? everyMs : everyMs());
  });
}
