/**
 * Runs `work` on every item, `lanes` at a time: each lane takes the next item as soon as it is free, so the
 * items start in their order. A step with nothing to wait for (it returns no promise) lets its lane take
 * the next item at once, as the hand-written loops this replaced did, so their runs replay the same.
 */
export async function inLanes<T>(items: readonly T[], lanes: number, work: (item: T) => Promise<unknown> | void): Promise<void> {
  const queue = [...items];
  const lane = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
      const pending = work(item);
      if (pending) await pending;
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
}
