import { findCertificate } from '../../../data/deploy/certificates';
import { writeCertificateNotice } from '../../../data/deploy/notices';
import { DeployDeps } from '../deps';

/** Writes the notice of a renewal that failed (sent by the messaging worker); answers how many recipients it has. */
export function notifyCertificateOwners({ db, config }: DeployDeps) {
  return async (input: { batchId: string; hostname: string; problem: string }): Promise<number> => {
    const certificate = await findCertificate(db, input.hostname);
    return writeCertificateNotice(db, {
      batchId: input.batchId,
      hostname: input.hostname,
      problem: input.problem,
      notAfter: certificate?.not_after ?? null,
      publicUrl: config.api.publicUrl,
      template: 'certificate-problem',
    });
  };
}
