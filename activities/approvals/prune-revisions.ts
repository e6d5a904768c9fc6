import { pruneEveryRule } from '../../data/content/revision-retention';
import { ApprovalsDeps } from './deps';

/** Every revision retention rule prunes what it covers. Safe to repeat: a second run finds nothing left. */
export function pruneRevisionsByRule({ db }: ApprovalsDeps) {
  return async (): Promise<{ rules: number; pruned: number }> => pruneEveryRule(db);
}
