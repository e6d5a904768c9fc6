import { releaseSubmittable } from './releases';

test('a release is submitted from OPEN, FAILED or REJECTED, or again for the approval it waits on; never once published', () => {
  const at = (status: Parameters<typeof releaseSubmittable>[0]['status'], pendingCorrelationId: string | null = null) =>
    releaseSubmittable({ status, pendingCorrelationId }, 'approval-1');
  expect([at('OPEN'), at('FAILED'), at('REJECTED')]).toEqual([true, true, true]);
  expect(at('PENDING_APPROVAL', 'approval-1')).toBe(true);
  expect(at('PENDING_APPROVAL', 'approval-0')).toBe(false);
  expect(at('PUBLISHED')).toBe(false);
});
