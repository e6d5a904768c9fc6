import { fairnessKeyOf, fairShareOf, PLATFORM_FAIRNESS_KEY, PRIORITY } from './fairness';

test("a site's work carries the site's id; work no site asked for carries the platform's key", () => {
  expect(fairShareOf('singleSend', 'site-a')).toEqual({ priorityKey: PRIORITY.urgent, fairnessKey: 'site-a' });
  expect(fairShareOf('reconcile')).toEqual({ priorityKey: PRIORITY.bulk, fairnessKey: PLATFORM_FAIRNESS_KEY });
  expect(fairShareOf('archiveRun', null).fairnessKey).toBe(PLATFORM_FAIRNESS_KEY);
});

test('notices, single sends, deploys and rollbacks go before bulk sends, archive runs and reconciles', () => {
  for (const first of ['singleSend', 'publish', 'deploy', 'serviceChange'] as const) {
    for (const later of ['bulkSend', 'archiveRun', 'reconcile', 'housekeeping'] as const) {
      expect(fairShareOf(first).priorityKey).toBeLessThan(fairShareOf(later).priorityKey);
    }
  }
});

test('a site id too long for Temporal becomes a 64-byte key of its own, the same every time', () => {
  const long = `s${'x'.repeat(100)}`;
  const other = `s${'x'.repeat(99)}y`;
  expect(fairnessKeyOf(long)).toHaveLength(64);
  expect(fairnessKeyOf(long)).toBe(fairnessKeyOf(long));
  expect(fairnessKeyOf(long)).not.toBe(fairnessKeyOf(other));
  expect(fairnessKeyOf('x'.repeat(64))).toBe('x'.repeat(64));
});
