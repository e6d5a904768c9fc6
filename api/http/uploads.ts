import fs from 'node:fs';
import type { File } from 'formidable';
import { Context } from 'koa';
import { badRequest } from '../../lib/errors';

/** The multipart body's one `file` part; 400 when it is missing. */
export function uploadedFile(ctx: Context): File {
  const file = ctx.request.files?.file;
  const single = Array.isArray(file) ? file[0] : file;
  if (!single) throw badRequest('VALIDATION_FAILED', 'The request body is not valid.', [{ path: 'body.file', message: 'is required' }]);
  return single;
}

/** The upload's sha256 and size, computed by the multipart parser as it wrote the file. */
export function uploadedDigest(file: File): { sha256: string; sizeBytes: number } {
  if (typeof file.hash !== 'string') throw new Error('multipart uploads must be parsed with hashAlgorithm sha256');
  return { sha256: file.hash, sizeBytes: file.size };
}

/** Removes the request's temporary upload files; a handler calls it in `finally`, whatever happened. */
export async function removeUploads(ctx: Context): Promise<void> {
  for (const entry of Object.values(ctx.request.files ?? {})) {
    for (const file of Array.isArray(entry) ? entry : [entry]) await fs.promises.rm(file.filepath, { force: true });
  }
}
