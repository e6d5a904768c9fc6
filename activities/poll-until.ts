import { Context, sleep } from '@temporalio/activity';

/**
 * Asks `check` again and again until it gives an answer (anything but `undefined`), and returns that answer.
 * Between two asks the activity heartbeats, so Temporal knows it is alive, and sleeps `everyMs` (a number,
 * or a function for a pace that changes). `check` throws to give up: at a deadline, or on a failure it saw.
 * The sleep is the activity's own: a cancelled activity stops at once.
 */
export async function pollUntil<T>(everyMs: number | (() => number), check: (attempt: number) => Promise<T | undefined>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const answer = await check(attempt);
    if (answer !== undefined) return answer;
    Context.current().heartbeat({ attempt });
    await sleep(typeof everyMs === 'number' ? everyMs : everyMs());
  }
}
