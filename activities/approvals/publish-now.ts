import { registeredComponentType } from '../../data/content/component-types';
import { publishComponentRevision } from '../../data/content/components';
import { publishRelease } from '../../data/content/releases';
import { RELEASE } from '../../domain/approvals';
import { ApprovalsDeps } from './deps';

/**
 * Publishes the submitted revision when no approval is required (a release: every item at once, or none,
 * the failure recorded on the release). Publishing it twice is a no-op.
 */
export function publishNow({ db }: ApprovalsDeps) {
  return async (input: { componentType: string; resourceId: string; revision: number; requestedBy: string }): Promise<void> => {
    const actor = { id: input.requestedBy, name: null };
    if (input.componentType === RELEASE) {
      await publishRelease(db, { id: input.resourceId, version: input.revision, actor });
      return;
    }
    await publishComponentRevision(db, { type: registeredComponentType(input.componentType), id: input.resourceId, rev: input.revision, actor });
  };
}
