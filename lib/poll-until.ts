/**
 * Asks `check` again and again until it gives an answer (anything but `undefined`), and returns that answer.
 * `pause` runs between two asks: a plain sleep (`pauseMs`), or one that also tells someone it is alive.
 * `check` throws to give up: at a deadline, or on a failure it saw.
 */
export async function askUntil<T>(check: (attempt: number) => Promise<T | undefined>, pause: (attempt: number) => Promise<void>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const answer = await check(attempt);
    if (answer !== undefined) return answer;
    await pause(attempt);
  }
}

/** A plain pause of `ms` (or of what `ms()` says each time, for a pace that changes). */
export const pauseMs = (ms: number | (() => number)) => () => new Promise<void>((resolve) => setTimeout(resolve, typeof ms === 'number' ? ms : ms()));
