import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { AppDeps } from '../../deps';
import { Identity } from '../../http/identity';
import { conflict, ProblemError } from '../../../lib/errors';
import { openApprovalOf } from '../../../data/approvals/approvals';
import { ComponentType } from '../../../data/content/component-types';
import { ComponentRow } from '../../../data/content/components';
import { latestRevision } from '../../../data/content/revisions';
import { startWorkflow } from '../../../temporal-config/client';
import { TaskQueues } from '../../../temporal-config/task-queues';
import { publishComponent } from '../../../workflows/approvals/publish-component';
import { PublishInput, publishProgressQuery, publishWorkflowId } from '../../../workflows/approvals/definitions';
import { SearchAttributeKeys } from '../../../workflows/search-attributes';

/** How long the answer waits for the workflow to publish or to reach the manager's queue. */
const ANSWER_WITHIN_MS = 30000;

/** Starts `publish:{TYPE}:{id}` on the approvals queue; 409 APPROVAL_PENDING while one runs for the resource. */
export function startPublishWorkflow(temporal: AppDeps['temporal'], input: PublishInput) {
  return startWorkflow(temporal, publishComponent, {
    workflowId: publishWorkflowId(input.componentType, input.resourceId),
    taskQueue: TaskQueues.approvals,
    args: [input],
    typedSearchAttributes: [
      { key: SearchAttributeKeys.SiteId, value: input.siteId },
      { key: SearchAttributeKeys.ComponentType, value: input.componentType },
    ],
    alreadyRunningCode: 'APPROVAL_PENDING',
  });
}

export interface PublishAnswer {
  status: 200 | 202;
  body: Record<string, unknown>;
}

function failureOf(error: unknown): ProblemError {
  const cause = error instanceof WorkflowFailedError ? error.cause?.cause ?? error.cause : error;
  if (cause instanceof ApplicationFailure && cause.type) return new ProblemError(409, cause.type, cause.message);
  return new ProblemError(500, 'INTERNAL_ERROR', 'The publish workflow failed.');
}

/**
 * `POST {collection}/{id}/publish`: starts `publish:{TYPE}:{id}` for the latest revision and answers once
 * the workflow has either published it (200) or put it in the approval queue (202).
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
  const started = await startPublishWorkflow(temporal, input);

  const handle = temporal.client.workflow.getHandle(started.workflowId, started.runId);
  const deadline = Date.now() + ANSWER_WITHIN_MS;
  for (;;) {
    // The query answers while the run is open and from its history once closed; it fails before the first
    // workflow task has run, and for a run that failed.
    const progress = await handle.query(publishProgressQuery).catch(() => null);
    if (progress?.stage === 'PUBLISHED') return { status: 200, body: { status: 'PUBLISHED', publishedRev: progress.revision, ...started } };
    if (progress?.stage === 'PENDING_APPROVAL') {
      return { status: 202, body: { status: 'PENDING_APPROVAL', correlationId: progress.correlationId, ...started } };
    }
    if (!progress) {
      const { status } = await handle.describe();
      if (status.name !== 'RUNNING' && status.name !== 'COMPLETED') throw failureOf(await handle.result().then(() => null, (error: unknown) => error));
    }
    if (Date.now() > deadline) {
      throw new ProblemError(503, 'TEMPORAL_UNAVAILABLE', `The publish of ${type.type} ${row.id} was started but no approvals worker has taken it yet.`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
