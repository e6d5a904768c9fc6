import { askUntil } from './poll-until';

test('askUntil asks until an answer, pausing between two asks, and a throw from the check gives up', async () => {
  const pauses: number[] = [];
  const pause = async (attempt: number) => void pauses.push(attempt);
  expect(await askUntil(async (attempt) => (attempt === 3 ? 'ready' : undefined), pause)).toBe('ready');
  expect(pauses).toEqual([1, 2]);
  // false and null are answers too: only undefined asks again.
  expect(await askUntil(async () => false, pause)).toBe(false);
  await expect(askUntil(async () => Promise.reject(new Error('gone')), pause)).rejects.toThrow('gone');
  expect(pauses).toEqual([1, 2]);
});
