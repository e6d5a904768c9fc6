import { pollUntil } from '../../poll-until';
import { DeployDeps } from '../deps';
import { finalFailure } from '../../failures';
import { acmeOf } from './acme-of';

/**
 * Waits until the ACME server has checked the order's challenges. A refusal ends the run with the server's
 * own problem; a server that is down or limits the rate is tried again by Temporal, with backoff.
 */
export function awaitCertificateValidation(deps: DeployDeps) {
  return async (input: { hostname: string; orderUrl: string }): Promise<void> => {
    const acme = await acmeOf(deps);
    await pollUntil(1000, async () => {
      const validation = await acme.validation(input.orderUrl);
      if (validation.state === 'VALID') return true;
      if (validation.state === 'INVALID')
        // Trying the same order again cannot help: the run ends with the ACME server's own problem.
        throw finalFailure('ACME_CHALLENGE_REFUSED', validation.problem);
      return undefined;
    });
  };
}
