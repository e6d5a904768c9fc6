import { registeredComponentType } from '../../data/content/component-types';
import { publishComponentRevision } from '../../data/content/components';
import { ApprovalsDeps } from './deps';

/** Publishes the submitted revision when no approval is required. Publishing it twice is a no-op. */
export function publishNow({ db }: ApprovalsDeps) {
  return async (input: { componentType: string; resourceId: string; revision: number; requestedBy: string }): Promise<void> => {
    await publishComponentRevision(db, {
      type: registeredComponentType(input.componentType),
      id: input.resourceId,
      rev: input.revision,
      actor: { id: input.requestedBy, name: null },
    });
  };
}
