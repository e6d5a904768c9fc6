import fs from 'node:fs';
import { Context } from '@temporalio/activity';
import { finalFailure, retryableFailure } from '../failures';
import { rewritePartFile } from '../../data/archival/part-files';
import { findPart, markPartConfirmed } from '../../data/archival/parts';
import { ArchivalDeps } from './deps';
import { stagingFile } from '../../data/archival/staging-files';
import { ARCHIVE_CONTENT_TYPES } from '../../domain/archival';
import { encodingFor } from './archive-formats';

export interface UploadPartInput {
  partId: string;
}

export interface UploadedPart {
  partId: string;
  assetId: string;
}

interface SinkAnswer {
  assetId?: string;
  sha256?: string;
  sizeBytes?: number;
  code?: string;
  detail?: string;
}

/**
 * Stores a recorded part through the asset sink and counts it only when the answer confirms it: status 200
 * or 201, the same sha256 and the same size. The API takes the staged file itself where it shares the data
 * folder, else the bytes are sent. Safe to repeat: the sink answers a file it already has with the same
 * asset. A staging file that is gone or of another size (another worker, a wiped disk) is written again from
 * the ids the manifest holds, and must hash to the recorded sha256; one whose bytes changed is refused by
 * the sink's checksum check, removed, and written again on the next attempt.
 */
export function uploadPart({ db, config }: ArchivalDeps) {
  return async (input: UploadPartInput): Promise<UploadedPart> => {
    const part = await findPart(db, input.partId);
    if (part.state !== 'EXPORTED') return { partId: part.id, assetId: part.asset_id as string };

    const file = stagingFile(config.dataDir, part.id, part.format);
    /** The staged file, written again from the manifest if it is gone or of another size; it must hash as recorded. */
    const ensureStaged = async () => {
      const staged = await fs.promises.stat(file).catch(() => null);
      if (staged?.size === Number(part.size_bytes)) return;
      const rewritten = await rewritePartFile({ databaseUrl: config.databaseUrl, part, file, encoding: encodingFor(part.format) });
      if (rewritten?.sha256 !== part.sha256) {
        throw finalFailure('PART_CHANGED', `the rows of ${part.file_name} changed since they were exported`);
      }
    };
    const toSink = async (
      path: string,
      init: { body: FormData | string; headers?: Record<string, string> },
    ): Promise<{ status: number; answer: SinkAnswer }> => {
      const heartbeat = setInterval(() => Context.current().heartbeat({ stage: 'upload' }), 5000);
      try {
        const response = await fetch(`${config.api.internalUrl}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${config.secrets.internalToken}`, ...init.headers },
          body: init.body,
          redirect: 'error',
          signal: Context.current().cancellationSignal,
        });
        return { status: response.status, answer: (await response.json().catch(() => ({}))) as SinkAnswer };
      } finally {
        clearInterval(heartbeat);
      }
    };
    // The API stores the staged file itself where it shares the data folder (npm start, compose's volume): no
    // byte crosses HTTP. It verifies the bytes against the manifest, and answers a file stored before as it is.
    const handOver = () =>
      toSink('/api/assets/internal/archive-staged', { body: JSON.stringify({ partId: part.id }), headers: { 'content-type': 'application/json' } });
    // Any 404: no file staged where the API looks, or an older API that lacks this route.
    const notStaged = (sent: { status: number }) => sent.status === 404;
    const staged = await fs.promises.stat(file).catch(() => null);
    if (staged && staged.size !== Number(part.size_bytes)) await ensureStaged();
    let sent = await handOver();
    if (notStaged(sent)) {
      await ensureStaged();
      sent = await handOver();
    }
    if (notStaged(sent)) {
      // An API without the workers' data folder: the bytes are sent.
      const form = new FormData();
      form.set('siteId', part.site_id);
      form.set('logType', part.log_type);
      form.set('fileName', part.file_name);
      form.set('rowCount', String(part.row_count));
      form.set('sha256', part.sha256);
      form.set('file', await fs.openAsBlob(file, { type: ARCHIVE_CONTENT_TYPES[part.format] }), part.file_name);
      sent = await toSink('/api/assets/internal/archive', { body: form });
    }
    const { status, answer } = sent;

    if (status === 507 && answer.code === 'ARCHIVE_SINK_FULL') {
      // Retried while the activity's attempts last (space may be freed); then the site fails saying so, its rows kept.
      throw retryableFailure(
        'ARCHIVE_SINK_FULL',
        `ARCHIVE_SINK_FULL: the archive storage is full; ${part.file_name} was not stored and none of its rows were deleted`,
      );
    }
    // Retried: the store may be back, or its credentials set, by the next attempt. The answer says why (never a secret).
    if (status >= 500) throw new Error(`the asset sink answered ${status} for ${part.file_name}: ${answer.code ?? ''} ${answer.detail ?? ''}`.trim());
    if (status === 400 && answer.code === 'CHECKSUM_MISMATCH') {
      // The staged file changed on disk after its export: the next attempt writes it again from the manifest.
      await fs.promises.rm(file, { force: true });
      throw new Error(`the staged ${part.file_name} no longer hashes to its recorded sha256; it will be written again`);
    }
    if (status !== 200 && status !== 201) {
      throw finalFailure('UPLOAD_REFUSED', `the asset sink refused ${part.file_name}: ${status} ${answer.code ?? ''} ${answer.detail ?? ''}`.trim());
    }
    if (answer.sha256 !== part.sha256 || Number(answer.sizeBytes) !== Number(part.size_bytes) || !answer.assetId) {
      throw finalFailure('UPLOAD_NOT_CONFIRMED', `the asset sink did not confirm ${part.file_name}: sha256 or size differ`);
    }
    await markPartConfirmed(db, { partId: part.id, assetId: answer.assetId });
    return { partId: part.id, assetId: answer.assetId };
  };
}
