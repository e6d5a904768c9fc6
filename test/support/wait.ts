export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** A reason to stop waiting at once (a child process that exited, say): its message is the error. */
  abortIf?: () => string | null;
}

/**
 * Polls `check` until it answers something truthy, which is returned. Fails naming `what` after the timeout
 * (120 s unless said), or at once with `abortIf`'s reason. The one polling loop of the tests.
 */
export async function waitUntil<T>(
  what: string,
  check: () => Promise<T | null | undefined | false> | T | null | undefined | false,
  options: number | WaitOptions = {},
): Promise<T> {
  const { timeoutMs = 120000, intervalMs = 200, abortIf } = typeof options === 'number' ? { timeoutMs: options } : options;
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    const abort = abortIf?.();
    if (abort) throw new Error(abort);
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Whether `work` resolves (true) or is rejected (false): for a wait on something that fails until it is ready. */
export function succeeds(work: Promise<unknown>): Promise<boolean> {
  return work.then(
    () => true,
    () => false,
  );
}
