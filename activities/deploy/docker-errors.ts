/** Docker's "no such container/image" answer: what a repeated removal finds, and is fine with. */
export function isGone(error: unknown): boolean {
  return (error as { statusCode?: number })?.statusCode === 404;
}

/** Docker's "already in that state" answer (a stop of a stopped container). */
export function isUnchanged(error: unknown): boolean {
  return (error as { statusCode?: number })?.statusCode === 304;
}
