import { certificatesDue } from '../../../data/deploy/certificates';
import { DeployDeps } from '../deps';

/**
 * The certificates the renewal sweep starts a run for: due for renewal, or none yet and not tried lately. None
 * without an ACME server, whatever the run's input says (a worker of the previous release does not read the `acme` flag).
 */
export function listCertificatesDue({ db, config }: DeployDeps) {
  return async (input: { retryAfterSeconds: number }): Promise<Array<{ hostname: string; renewal: boolean }>> =>
    config.edge.acme ? certificatesDue(db, input.retryAfterSeconds) : [];
}
