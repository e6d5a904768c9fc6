import fs from 'node:fs';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { LOG_TABLES } from '../../data/archival/log-tables';
import { findPart, PART_ROW_TABLE, PART_TABLE } from '../../data/archival/parts';
import { sha256OfFile } from '../../data/assets/storage';
import { ArchivalDeps } from './deps';
import { connectForCopy, copyToCsvFile, stagingFile } from './staging-files';

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
 * Uploads a recorded part to the asset sink and counts it only when the answer confirms it: status 200 or
 * 201, the same sha256 and the same size. Safe to repeat: the sink answers a file it already has with the
 * same asset. A staging file that is gone (another worker, a wiped disk) is written again from the ids the
 * manifest holds, and must hash to the recorded sha256.
 */
export function uploadPart({ db, config }: ArchivalDeps) {
  return async (input: UploadPartInput): Promise<UploadedPart> => {
    const part = await findPart(db, input.partId);
    if (part.state !== 'EXPORTED') return { partId: part.id, assetId: part.asset_id as string };

    const file = stagingFile(config.dataDir, part.id);
    if (!fs.existsSync(file) || (await sha256OfFile(file)).sha256 !== part.sha256) {
      const client = await connectForCopy(config.databaseUrl);
      try {
        await copyToCsvFile({
          client,
          select: `select t.* from ${LOG_TABLES[part.log_type]} t join ${PART_ROW_TABLE} r on r.row_id = t.id where r.part_id = '${part.id}' order by t.id`,
          file,
        });
      } finally {
        await client.end();
      }
      if ((await sha256OfFile(file)).sha256 !== part.sha256) {
        throw ApplicationFailure.nonRetryable(`the rows of ${part.file_name} changed since they were exported`, 'PART_CHANGED');
      }
    }

    const form = new FormData();
    form.set('siteId', part.site_id);
    form.set('logType', part.log_type);
    form.set('fileName', part.file_name);
    form.set('rowCount', String(part.row_count));
    form.set('sha256', part.sha256);
    form.set('file', await fs.openAsBlob(file, { type: 'text/csv' }), part.file_name);

    const heartbeat = setInterval(() => Context.current().heartbeat({ stage: 'upload' }), 5000);
    let status: number;
    let answer: SinkAnswer;
    try {
      const response = await fetch(`${config.apiInternalUrl}/api/assets/internal/archive`, {
        method: 'POST',
        headers: { authorization: `Bearer ${config.internalToken}` },
        body: form,
        redirect: 'error',
        signal: Context.current().cancellationSignal,
      });
      status = response.status;
      answer = (await response.json().catch(() => ({}))) as SinkAnswer;
    } finally {
      clearInterval(heartbeat);
    }

    if (status >= 500) throw new Error(`the asset sink answered ${status} for ${part.file_name}`);
    if (status !== 200 && status !== 201) {
      throw ApplicationFailure.nonRetryable(`the asset sink refused ${part.file_name}: ${status} ${answer.code ?? ''} ${answer.detail ?? ''}`.trim(), 'UPLOAD_REFUSED');
    }
    if (answer.sha256 !== part.sha256 || Number(answer.sizeBytes) !== Number(part.size_bytes) || !answer.assetId) {
      throw ApplicationFailure.nonRetryable(`the asset sink did not confirm ${part.file_name}: sha256 or size differ`, 'UPLOAD_NOT_CONFIRMED');
    }
    await db(PART_TABLE).where({ id: part.id, state: 'EXPORTED' }).update({ state: 'CONFIRMED', asset_id: answer.assetId, updated_at: db.fn.now() });
    return { partId: part.id, assetId: answer.assetId };
  };
}
