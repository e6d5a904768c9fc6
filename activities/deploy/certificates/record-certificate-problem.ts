import { recordProblem } from '../../../data/deploy/certificates';
import { DeployDeps } from '../deps';

/** Keeps why the last attempt failed, for `GET …/domains`; a certificate still served stays served. */
export function recordCertificateProblem({ db }: DeployDeps) {
  return async (input: { hostname: string; problem: string }): Promise<void> => recordProblem(db, input);
}
