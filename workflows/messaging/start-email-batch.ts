import * as wf from '@temporalio/workflow';
import { TaskQueues } from '../../domain/task-queues';
import { emailRoleWorkflowId, SEND_EMAIL_TO_ROLE_WORKFLOW, SendEmailToRoleWorkflow } from './definitions';

/** Hands a written batch of platform emails (a notice) to the messaging worker, as a run of its own that outlives the caller's. */
export async function startEmailBatch(batchId: string): Promise<void> {
  await wf.startChild<SendEmailToRoleWorkflow>(SEND_EMAIL_TO_ROLE_WORKFLOW, {
    workflowId: emailRoleWorkflowId(batchId),
    taskQueue: TaskQueues.messaging,
    args: [{ batchId }],
    parentClosePolicy: wf.ParentClosePolicy.ABANDON,
  });
}
