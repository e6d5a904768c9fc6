import { Client } from '@temporalio/client';
import { DELIVER_STATUS_CALLBACKS_WORKFLOW, STATUS_CALLBACKS_WORKFLOW_ID } from '../workflows/messaging/definitions';
import { TaskQueues } from '../domain/task-queues';

/**
 * Starts the status-callback dispatcher unless it runs already: safe on every messaging worker's start, from
 * several at once (the one running is kept, whichever started it).
 */
export async function ensureStatusCallbackDispatcher(client: Client): Promise<void> {
  await client.workflow.start(DELIVER_STATUS_CALLBACKS_WORKFLOW, {
    workflowId: STATUS_CALLBACKS_WORKFLOW_ID,
    taskQueue: TaskQueues.messaging,
    args: [],
    workflowIdConflictPolicy: 'USE_EXISTING',
    memo: { description: "Delivers every site's delivery-status callbacks" },
  });
}
