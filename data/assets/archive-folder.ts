import { forbidden, PlatformError } from '../../lib/errors';
import { ARCHIVE_FOLDER } from '../../domain/archival';

/** `/archive` and everything under it belong to the archive sink. */
export function isArchiveFolder(folder: unknown): boolean {
  return typeof folder === 'string' && (folder === ARCHIVE_FOLDER || folder.startsWith(`${ARCHIVE_FOLDER}/`));
}

/**
 * Archive files are records: once a run pruned their rows, a file is the only copy of them. Nobody edits,
 * renames, restores, re-publishes, archives or moves one, nor moves or uploads a file into `/archive`.
 * Null when the write is allowed.
 */
export function archiveWriteRefusal(current: { folder?: unknown } | null, next?: { folder?: unknown }): PlatformError | null {
  if (current && isArchiveFolder(current.folder)) {
    return forbidden(`Files in ${ARCHIVE_FOLDER} are records of archive runs: they cannot be changed or moved.`, 'ARCHIVE_READ_ONLY');
  }
  if (next && isArchiveFolder(next.folder)) {
    return forbidden(`${ARCHIVE_FOLDER} belongs to the archive runs: no file can be put there by hand.`, 'ARCHIVE_READ_ONLY');
  }
  return null;
}
