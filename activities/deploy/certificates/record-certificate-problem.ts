import { recordProblem } from '../../../data/deploy/certificates';
import { DeployDeps } from '../deps';

/**
 * Keeps why the last attempt failed, for `GET …/domains`; a certificate still served stays served. Answers
 * whether it is the name's first failure since its last success (its owners hear of that one).
 */
export function recordCertificateProblem({ db }: DeployDeps) {
  return async (input: { hostname: string; problem: string }): Promise<boolean> => recordProblem(db, input);
}
