/** The promise's answer, or a rejection once `ms` have passed: a probe that hangs counts as a probe that failed. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);
}
