import { WithStartWorkflowOperation } from '@temporalio/client';
import { AppDeps } from '../../deps';
import { Identity } from '../../http/identity';
import { conflict } from '../../../lib/errors';
import { answerWithin, temporalCallError } from '../../../temporal-config/temporal-errors';
import { openApprovalOf } from '../../../data/approvals/approvals';
import { ComponentType } from '../../../data/content/component-types';
import { ComponentRow } from '../../../data/content/components';
import { latestRevision } from '../../../data/content/revisions';
import { startWorkflow, workflowUiUrl } from '../../../temporal-config/client';
import { TaskQueues } from '../../../domain/task-queues';
import { PublishInput } from '../../../domain/approvals';
import { PublishProgress, publishWorkflowId, submittedUpdate, PUBLISH_WORKFLOW, PublishWorkflow } from '../../../workflows/approvals/definitions';
import { SearchAttributeKeys } from '../../../domain/search-attributes';

/** How long the answer waits for the workflow to publish or to reach the manager's queue. */
const ANSWER_WITHIN_MS = 30000;

const publishStartOptions = (input: PublishInput) => ({
  workflowId: publishWorkflowId(input.componentType, input.resourceId),
  taskQueue: TaskQueues.approvals,
  args: [input] as [PublishInput],
  typedSearchAttributes: [
    { key: SearchAttributeKeys.SiteId, value: input.siteId },
    { key: SearchAttributeKeys.ComponentType, value: input.componentType },
  ],
});

/** Starts `publish:{TYPE}:{id}` on the approvals queue; 409 APPROVAL_PENDING while one runs for the resource. */
export function startPublishWorkflow(temporal: AppDeps['temporal'], input: PublishInput) {
  return startWorkflow<PublishWorkflow>(temporal, PUBLISH_WORKFLOW, { ...publishStartOptions(input), alreadyRunningCode: 'APPROVAL_PENDING' });
}

export interface PublishAnswer {
  status: 200 | 202;
  body: Record<string, unknown>;
}

/**
 * `POST {collection}/{id}/publish`: starts `publish:{TYPE}:{id}` for the latest revision with its
 * `submitted` Update (Update-with-Start, one call), which answers once the run has either published the
 * revision (200) or put it in the approval queue (202).
 */
export async function startPublish(
  { db, temporal }: Pick<AppDeps, 'db' | 'temporal'>,
  args: { type: ComponentType; row: ComponentRow; identity: Identity; comment: string | null },
): Promise<PublishAnswer> {
  const { type, row } = args;
  if (await openApprovalOf(db, type.type, row.id)) throw conflict('APPROVAL_PENDING', `${type.type} ${row.id} is waiting for approval.`);
  const input: PublishInput = {
    componentType: type.type,
    siteId: row.site_id,
    resourceId: row.id,
    revision: (await latestRevision(db, type, row.id)) as number,
    callbackPath: `${type.collection}/${row.id}/approval-callback`,
    requestedBy: args.identity.id,
    title: String(row.name),
    comment: args.comment,
    correlationId: null,
  };
  const start = new WithStartWorkflowOperation<PublishWorkflow>(PUBLISH_WORKFLOW, { ...publishStartOptions(input), workflowIdConflictPolicy: 'FAIL' });
  let progress: PublishProgress;
  try {
    progress = await answerWithin(ANSWER_WITHIN_MS, temporal.client.workflow.executeUpdateWithStart(submittedUpdate, { startWorkflowOperation: start }));
  } catch (error) {
    throw temporalCallError(error, {
      alreadyRunning: ['APPROVAL_PENDING', `A publish of ${type.type} ${row.id} is already in progress.`],
      late: `The publish of ${type.type} ${row.id} was started but no approvals worker has taken it yet.`,
    });
  }
  // The handle of a run this call started carries its first run id (the SDK's type does not say so).
  const handle = (await start.workflowHandle()) as { workflowId: string; firstExecutionRunId?: string };
  const runId = handle.firstExecutionRunId ?? '';
  const started = { workflowId: handle.workflowId, runId, uiUrl: workflowUiUrl(temporal, handle.workflowId, runId) };
  if (progress.stage === 'PUBLISHED') return { status: 200, body: { status: 'PUBLISHED', publishedRev: progress.revision, ...started } };
  return { status: 202, body: { status: 'PENDING_APPROVAL', correlationId: progress.correlationId, ...started } };
}
