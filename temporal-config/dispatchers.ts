import { Client } from '@temporalio/client';
import { DELIVER_STATUS_CALLBACKS_WORKFLOW, STATUS_CALLBACKS_WORKFLOW_ID } from '../workflows/messaging/definitions';
import { TaskQueues } from '../domain/task-queues';
import { fairShareOf } from '../domain/fairness';
import { certificateWorkflowId, OBTAIN_CERTIFICATE_WORKFLOW, ObtainCertificateInput } from '../workflows/deploy/definitions';

/**
 * Starts the status-callback dispatcher unless it runs already: safe on every messaging worker's start, from
 * several at once (the one running is kept, whichever started it).
 */
export async function ensureStatusCallbackDispatcher(client: Client): Promise<void> {
  await client.workflow.start(DELIVER_STATUS_CALLBACKS_WORKFLOW, {
    workflowId: STATUS_CALLBACKS_WORKFLOW_ID,
    taskQueue: TaskQueues.messaging,
    args: [],
    priority: fairShareOf('callbacks'),
    workflowIdConflictPolicy: 'USE_EXISTING',
    memo: { description: "Delivers every site's delivery-status callbacks" },
  });
}

/**
 * Starts a certificate run for each hostname that has none going: safe to call again, and from the API and
 * the workers at once (the run going is kept). Answers at once; the runs go on their own.
 */
export async function startCertificateRuns(client: Client, hostnames: Array<{ hostname: string; renewal: boolean }>): Promise<void> {
  for (const { hostname, renewal } of hostnames) {
    const args: [ObtainCertificateInput] = [{ hostname, renewal }];
    await client.workflow.start(OBTAIN_CERTIFICATE_WORKFLOW, {
      workflowId: certificateWorkflowId(hostname),
      taskQueue: TaskQueues.deployments,
      args,
      priority: fairShareOf('certificate'),
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
  }
}
