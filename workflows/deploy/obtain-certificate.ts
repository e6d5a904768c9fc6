import * as wf from '@temporalio/workflow';
import type { DeployActivities } from '../../activities/deploy';
import { certificateInputProblem } from '../../domain/service-domains';
import { refuseInvalidInput } from '../valid-input';
import { tellOwners } from './certificate-notice';
import { reasonOf } from '../failure-reason';
import { CertificateOutcome, CertificateStage, certificateStageQuery, ObtainCertificateInput } from './definitions';

/** ACME calls: a server that is down or limits the rate is tried again with backoff, for up to about a day. */
const acme = wf.proxyActivities<DeployActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '1 hour', maximumAttempts: 30 },
});
const quickDb = wf.proxyActivities<DeployActivities>({ startToCloseTimeout: '1 minute', retry: { initialInterval: '1 second', maximumAttempts: 10 } });
const edge = wf.proxyActivities<DeployActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

/**
 * Waits until the edge serves the new certificate. It is stored already: an edge that does not confirm in
 * time is logged, and the run still ends ISSUED (the control plane writes it at its next rewrite).
 */
async function confirmAtEdge(hostname: string, serial: string): Promise<void> {
  try {
    await edge.confirmCertificateAtEdge({ hostname, serial });
  } catch (error) {
    if (wf.isCancellation(error)) throw error;
    wf.log.warn('the edge did not confirm the new certificate in time', { hostname, reason: reasonOf(error) });
  }
}

/**
 * Gets a certificate for one hostname from the ACME server, or renews it: order, answer the HTTP-01 challenge
 * at the edge, finalise, store, and wait until the edge serves it. The private key stays in the database;
 * this history holds the hostname, the order's URL, a serial number and dates. A failure is kept for
 * `GET …/domains`, with the ACME server's problem; the first failed renewal since a success also tells the
 * service's owners.
 */
export async function obtainCertificate(input: ObtainCertificateInput): Promise<CertificateOutcome> {
  refuseInvalidInput(certificateInputProblem(input));
  const { hostname } = input;
  let stage: CertificateStage = 'ORDERING';
  wf.setHandler(certificateStageQuery, () => stage);
  try {
    const { orderUrl } = await acme.placeCertificateOrder({ hostname });
    stage = 'VALIDATING';
    await acme.awaitCertificateValidation({ hostname, orderUrl });
    stage = 'FINALISING';
    const issued = await acme.finishCertificateOrder({ hostname, orderUrl });
    stage = 'PUSHING';
    await confirmAtEdge(hostname, issued.serial);
    stage = 'DONE';
    return { hostname, state: 'ISSUED', ...issued };
  } catch (error) {
    if (wf.isCancellation(error)) throw error;
    const problem = reasonOf(error);
    stage = 'FAILED';
    const firstFailure = await quickDb.recordCertificateProblem({ hostname, problem });
    if (input.renewal && firstFailure) await tellOwners(hostname, problem);
    return { hostname, state: 'FAILED', problem };
  }
}
