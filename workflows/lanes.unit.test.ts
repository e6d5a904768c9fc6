import { inLanes } from './lanes';

test('inLanes starts the items in their order, never more at once than its lanes, and waits for them all', async () => {
  const started: number[] = [];
  let running = 0;
  let most = 0;
  const finished: number[] = [];
  await inLanes([1, 2, 3, 4, 5], 2, async (item) => {
    started.push(item);
    most = Math.max(most, ++running);
    // Uneven steps: a lane that is free takes the next item, whichever lane it is.
    await new Promise((resolve) => setTimeout(resolve, item === 1 ? 30 : 5));
    running--;
    finished.push(item);
  });
  expect(started).toEqual([1, 2, 3, 4, 5]);
  expect(most).toBe(2);
  expect(finished.sort()).toEqual([1, 2, 3, 4, 5]);
});

test('a step with nothing to wait for lets its lane take the next item at once', async () => {
  const order: string[] = [];
  const done = inLanes(['a', 'b', 'c'], 2, (item) => {
    order.push(item);
  });
  // Before anything is awaited: one lane went through every item. Had each step been awaited, the two lanes
  // would have taken 'a' and 'b' and left 'c' for later.
  expect(order).toEqual(['a', 'b', 'c']);
  await done;
});

test('a lane takes its next item in the turn its step settles, before other work that settled after it', async () => {
  // The order the hand-written loops gave: a workflow's commands, and so its replays, depend on it.
  const log: string[] = [];
  let settleFirst!: () => void;
  let settleOther!: () => void;
  const first = new Promise<string>((resolve) => (settleFirst = () => resolve('first')));
  const other = new Promise<void>((resolve) => (settleOther = resolve));
  const lanes = inLanes(
    ['a', 'b'],
    1,
    (item) => {
      log.push(`start ${item}`);
      return item === 'a' ? first : undefined;
    },
    (item, result) => log.push(`took ${item}: ${result}`),
  );
  const elsewhere = other.then(() => log.push('other work'));
  settleFirst();
  settleOther();
  await Promise.all([lanes, elsewhere]);
  expect(log).toEqual(['start a', 'took a: first', 'start b', 'other work']);
});
