import { noteUploadEnding } from '../../../data/deploy/notices';
import { DeployDeps } from '../deps';

/**
 * Notes on an uploaded certificate that it ends soon and writes its owners' notice (batch `batchId`, sent by
 * the messaging worker), both or neither. Safe to repeat. Answers whether the note is there, and how many
 * recipients the notice has.
 */
export function warnUploadOwners({ db, config }: DeployDeps) {
  return async (input: { hostname: string; serial: string; notAfter: string; problem: string; batchId: string }) =>
    noteUploadEnding(db, { ...input, notAfter: new Date(input.notAfter), publicUrl: config.api.publicUrl });
}
