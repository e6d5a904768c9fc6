/** The promise's answer, or a rejection once `ms` have passed: a probe that hangs counts as a probe that failed. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);
}

/**
 * `produce`, shared: callers within `maxAgeMs` of a call that produced get that call's answer, so a burst of
 * callers (probes, scrapers) costs one. A caller after that starts the next.
 */
export function sharedWhileFresh<T>(maxAgeMs: number, produce: () => Promise<T>): () => Promise<T> {
  let last: { at: number; answer: Promise<T> } | null = null;
  return () => {
    if (!last || Date.now() - last.at > maxAgeMs) last = { at: Date.now(), answer: produce() };
    return last.answer;
  };
}
