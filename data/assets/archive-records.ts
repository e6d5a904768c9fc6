import { Knex } from 'knex';
import { forbidden, PlatformError } from '../../lib/errors';
import { ARCHIVE_FOLDER } from '../../domain/archival';
import type { AssetRow } from './assets';

export const ARCHIVE_DELETION_TABLE = 'assets.archive_deletion';

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

/**
 * Keeps, in the delete's own transaction, who deleted an archive file, when, from which run and how many
 * rows it held (from the archive run's manifest; null for a file no manifest names).
 */
export async function recordArchiveDeletion(trx: Knex, args: { asset: AssetRow; deletedBy: { id: string; name: string | null } }): Promise<void> {
  const part = (await trx('settings.archive_part')
    .where({ asset_id: args.asset.id })
    .orderBy('created_at')
    .first('log_type', 'workflow_id', 'run_id', 'row_count')) as { log_type: string; workflow_id: string; run_id: string; row_count: number | string } | undefined;
  await trx(ARCHIVE_DELETION_TABLE).insert({
    asset_id: args.asset.id,
    site_id: args.asset.site_id,
    file_name: args.asset.name,
    sha256: args.asset.sha256,
    log_type: part?.log_type ?? null,
    workflow_id: part?.workflow_id ?? null,
    run_id: part?.run_id ?? null,
    row_count: part ? Number(part.row_count) : null,
    deleted_by: args.deletedBy.id,
    deleted_by_name: args.deletedBy.name,
  });
}
