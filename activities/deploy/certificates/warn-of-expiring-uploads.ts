import { markUploadExpiring, uploadsExpiring } from '../../../data/deploy/certificates';
import { DeployDeps } from '../deps';

/** The uploaded certificates whose owners are to be told it is time for another (two thirds of their lifetime). */
export function listUploadsExpiring({ db }: DeployDeps) {
  return async (): Promise<Array<{ hostname: string; serial: string; notAfter: string }>> =>
    (await uploadsExpiring(db)).map((upload) => ({ ...upload, notAfter: upload.notAfter.toISOString() }));
}

/** Notes the coming end on the upload, for `GET …/domains`; answers whether this is the first note (its owners hear of that one). */
export function markUploadExpiringSoon({ db }: DeployDeps) {
  return async (input: { hostname: string; serial: string; problem: string }): Promise<boolean> => markUploadExpiring(db, input);
}
