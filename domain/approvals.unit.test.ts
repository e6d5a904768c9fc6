import { durationMs, fourEyesRefusal } from './approvals';

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

describe('fourEyesRefusal', () => {
  const base = { requestedBy: 'eda', revisionAuthors: ['mia', 'eda'], decisions: [{ decidedBy: 'max', stageName: 'Review' }] };
  test.each([
    ['the requester', 'eda', 'SELF_APPROVAL_FORBIDDEN'],
    ['the author of a revision it would publish (#58, finding 2)', 'mia', 'SELF_APPROVAL_FORBIDDEN'],
    ['one who decided an earlier stage', 'max', 'APPROVER_ALREADY_DECIDED'],
  ])('refuses %s', (_who, deciderId, code) => {
    expect(fourEyesRefusal({ ...base, deciderId })?.code).toBe(code);
  });
  test('lets anyone else decide', () => {
    expect(fourEyesRefusal({ ...base, deciderId: 'bea' })).toBeNull();
  });
});
