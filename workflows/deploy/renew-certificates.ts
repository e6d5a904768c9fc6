import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import * as wf from '@temporalio/workflow';
import type { DeployActivities } from '../../activities/deploy';
import { renewalInputProblem } from '../../domain/service-domains';
import { refuseInvalidInput } from '../valid-input';
import { certificateWorkflowId, RenewCertificatesInput } from './definitions';
import { obtainCertificate } from './obtain-certificate';

const quickDb = wf.proxyActivities<DeployActivities>({ startToCloseTimeout: '1 minute', retry: { initialInterval: '1 second', maximumAttempts: 10 } });

/**
 * The renewal schedule's run: a certificate run for each certificate past two thirds of its lifetime, and
 * for each hostname still without one whose last try is old enough. A hostname whose run is going already
 * is left to it. The runs go on after this one ends.
 */
export async function renewCertificates(input: RenewCertificatesInput): Promise<{ started: string[]; running: string[] }> {
  refuseInvalidInput(renewalInputProblem(input));
  const due = await quickDb.listCertificatesDue({ retryAfterSeconds: input.retryAfterSeconds });
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
