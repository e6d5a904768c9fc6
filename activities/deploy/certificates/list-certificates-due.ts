import { certificatesDue } from '../../../data/deploy/certificates';
import { DeployDeps } from '../deps';

/** The certificates the renewal sweep starts a run for: due for renewal, or none yet and not tried lately. */
export function listCertificatesDue({ db }: DeployDeps) {
  return async (input: { retryAfterSeconds: number }): Promise<Array<{ hostname: string; renewal: boolean }>> => certificatesDue(db, input.retryAfterSeconds);
}
