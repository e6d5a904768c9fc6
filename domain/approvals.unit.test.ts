import { durationMs } from './approvals';

test('ISO 8601 durations in weeks, days, hours, minutes and seconds', () => {
  expect(durationMs('PT3S')).toBe(3000);
  expect(durationMs('PT1.5S')).toBe(1500);
  expect(durationMs('P2D')).toBe(2 * 86400000);
  expect(durationMs('P1DT12H30M')).toBe(86400000 + 12 * 3600000 + 30 * 60000);
  expect(durationMs('P1W')).toBe(7 * 86400000);
});

test('anything else is not a duration', () => {
  for (const text of ['P', 'PT', '3S', 'P1Y', 'P1M', 'PT-1S', 'P1DT', 'pt3s', 'PT3S ', '']) expect(durationMs(text)).toBeNull();
});
