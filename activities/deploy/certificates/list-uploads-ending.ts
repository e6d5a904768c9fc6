import { uploadWarningAt } from '../../../domain/certificates';
import { uploadsNotWarned } from '../../../data/deploy/certificates';
import { DeployDeps } from '../deps';

/** The uploaded certificates whose owners are to be told now that they end soon (`uploadWarningAt`). */
export function listUploadsEnding({ db }: DeployDeps) {
  return async (): Promise<Array<{ hostname: string; serial: string; notAfter: string }>> => {
    const now = Date.now();
    return (await uploadsNotWarned(db))
      .filter((upload) => uploadWarningAt(upload.notBefore, upload.notAfter).getTime() <= now)
      .map((upload) => ({ hostname: upload.hostname, serial: upload.serial, notAfter: upload.notAfter.toISOString() }));
  };
}
