import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import * as wf from '@temporalio/workflow';
import type { DeployActivities } from '../../activities/deploy';
import { renewalInputProblem } from '../../domain/service-domains';
import { refuseInvalidInput } from '../valid-input';
import { sendNotice } from './certificate-notice';
import { certificateWorkflowId, RenewCertificatesInput } from './definitions';
import { obtainCertificate } from './obtain-certificate';

const quickDb = wf.proxyActivities<DeployActivities>({ startToCloseTimeout: '1 minute', retry: { initialInterval: '1 second', maximumAttempts: 10 } });

/**
 * The renewal schedule's run. With an ACME server: a certificate run for each certificate past two thirds of
 * its lifetime, and for each hostname still without one whose last try is old enough; a hostname whose run
 * is going already is left to it, and the runs go on after this one ends. With or without one: the owners of
 * each uploaded certificate that ends soon (`uploadWarningAt`) are told, once, to upload another.
 */
export async function renewCertificates(input: RenewCertificatesInput): Promise<{ started: string[]; running: string[]; warned: string[] }> {
  refuseInvalidInput(renewalInputProblem(input));
  const { started, running } = input.acme === false ? { started: [], running: [] } : await startRunsDue(input.retryAfterSeconds);
  // Runs recorded before uploads were watched ended here.
  const warned = wf.patched('warn-of-expiring-uploads') ? await warnOfEndingUploads(input.acme !== false) : [];
  return { started, running, warned };
}

async function startRunsDue(retryAfterSeconds: number): Promise<{ started: string[]; running: string[] }> {
  const due = await quickDb.listCertificatesDue({ retryAfterSeconds });
  const started: string[] = [];
  const running: string[] = [];
  for (const { hostname, renewal } of due) {
    try {
      await wf.startChild(obtainCertificate, {
        workflowId: certificateWorkflowId(hostname),
        args: [{ hostname, renewal }],
        parentClosePolicy: wf.ParentClosePolicy.ABANDON,
      });
      started.push(hostname);
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
      running.push(hostname);
    }
  }
  return { started, running };
}

/**
 * ACME renews its own certificates; an uploaded one only an ADMIN can replace, so its owners are told in time,
 * once per upload: the note on the name and the notice are written together.
 */
async function warnOfEndingUploads(acme: boolean): Promise<string[]> {
  const warned: string[] = [];
  for (const { hostname, serial, notAfter } of await quickDb.listUploadsEnding()) {
    const advice = acme ? 'Upload another, or remove it so that ACME issues one.' : 'Upload another before then.';
    const problem = `The uploaded certificate ends at ${notAfter}. ${advice}`;
    const batchId = wf.uuid4();
    const { marked, recipients } = await quickDb.warnUploadOwners({ hostname, serial, notAfter, problem, batchId });
    if (!marked) continue;
    warned.push(hostname);
    if (recipients > 0) await sendNotice(hostname, batchId);
  }
  return warned;
}
