/**
 * Runs `start` on every item, `lanes` at a time: each lane takes the next item as soon as it is free, so the
 * items start in their order. `took` gets each item's result.
 *
 * A lane waits on the very promise `start` returns, then calls `took` and takes its next item in the same
 * turn. So its commands come in the same order as in the hand-written loops this replaced, and their runs
 * replay the same. Add no wait the old loops did not have, such as an async function that only awaits the
 * activity: each extra wait lets another part of the workflow send its command first. A step that returns
 * no promise lets its lane take the next item at once.
 */
export async function inLanes<T, R>(
  items: readonly T[],
  lanes: number,
  start: (item: T) => Promise<R> | void,
  took?: (item: T, result: R) => void,
): Promise<void> {
  const queue = [...items];
  const lane = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
      const pending = start(item);
      if (!pending) continue;
      const result = await pending;
      took?.(item, result);
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
}
