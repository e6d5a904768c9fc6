import * as wf from '@temporalio/workflow';
import type { DeployActivities } from '../../activities/deploy';
import { reasonOf } from '../failure-reason';
import { startEmailBatch } from '../messaging/start-email-batch';

const quickDb = wf.proxyActivities<DeployActivities>({ startToCloseTimeout: '1 minute', retry: { initialInterval: '1 second', maximumAttempts: 10 } });

/**
 * Tells the owners of the service that holds `hostname` that its certificate could not be renewed. A notice
 * is a courtesy: one that cannot be sent is logged, and changes nothing else.
 */
export async function tellOwners(hostname: string, problem: string): Promise<void> {
  const batchId = wf.uuid4();
  let recipients: number;
  try {
    recipients = await quickDb.notifyCertificateOwners({ hostname, problem, batchId });
  } catch (error) {
    wf.log.warn("the certificate's notice to the service's owners was not written", { hostname, reason: reasonOf(error) });
    return;
  }
  if (recipients > 0) await sendNotice(hostname, batchId);
}

/** Sends a certificate notice already written as batch `batchId`; a send that does not start is logged, and changes nothing else. */
export async function sendNotice(hostname: string, batchId: string): Promise<void> {
  try {
    await startEmailBatch(batchId);
  } catch (error) {
    wf.log.warn("the certificate's notice to the service's owners was written but its send did not start", { hostname, batchId, reason: reasonOf(error) });
  }
}
