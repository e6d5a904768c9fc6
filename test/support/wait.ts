/** Polls `check` until it answers something truthy, which is returned; fails naming `what` after `timeoutMs`. */
export async function waitUntil<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs = 120000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
