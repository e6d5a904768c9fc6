import { registeredComponentType } from '../../data/content/component-types';
import { publishComponentRevision } from '../../data/content/components';
import { publishRelease } from '../../data/content/releases';
import { untilDueByDatabase } from './due-time';
import { RELEASE } from '../../domain/approvals';
import { ApprovalsDeps } from './deps';

/**
 * Publishes the submitted revision when no approval is required (a release: every item at once, or none,
 * the failure recorded on the release). Publishing it twice is a no-op. With `notBefore` (a scheduled
 * publish, whose run woke a little early), it first waits until the database's clock reaches that time.
 */
export function publishNow({ db }: ApprovalsDeps) {
  return async (input: { componentType: string; resourceId: string; revision: number; requestedBy: string; notBefore?: string | null }): Promise<void> => {
    if (input.notBefore) await untilDueByDatabase(db, input.notBefore);
    const actor = { id: input.requestedBy, name: null };
    if (input.componentType === RELEASE) {
      await publishRelease(db, { id: input.resourceId, version: input.revision, actor });
      return;
    }
    await publishComponentRevision(db, { type: registeredComponentType(input.componentType), id: input.resourceId, rev: input.revision, actor });
  };
}
