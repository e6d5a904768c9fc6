/** Where a release stands: open for changes, waiting on its approval, published, or back with its reason. */
export type ReleaseStatus = 'OPEN' | 'PENDING_APPROVAL' | 'PUBLISHED' | 'FAILED' | 'REJECTED';

/** The statuses a release may be submitted for approval from: not while it waits, and never once published. */
export const SUBMITTABLE_RELEASE_STATUSES: readonly ReleaseStatus[] = ['OPEN', 'FAILED', 'REJECTED'];

/**
 * Whether a release in `status` may be submitted for the approval `correlationId`: from a submittable status,
 * or again for the approval it already waits on (a retried activity).
 */
export function releaseSubmittable(release: { status: ReleaseStatus; pendingCorrelationId: string | null }, correlationId: string): boolean {
  if (release.status === 'PENDING_APPROVAL') return release.pendingCorrelationId === correlationId;
  return SUBMITTABLE_RELEASE_STATUSES.includes(release.status);
}
