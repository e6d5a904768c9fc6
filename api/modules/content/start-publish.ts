import { WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError, WorkflowUpdateFailedError, WorkflowUpdateStage } from '@temporalio/client';
import { AppDeps } from '../../deps';
import { Identity } from '../../http/identity';
import { badRequest, conflict, notFound, PlatformError } from '../../../lib/errors';
import { answerWithin, temporalCallError } from '../../../temporal-config/temporal-errors';
import { openApprovalOf } from '../../../data/approvals/approvals';
import { ComponentType } from '../../../data/content/component-types';
import { ComponentRow } from '../../../data/content/components';
import { latestRevision } from '../../../data/content/revisions';
import { startWorkflow, workflowUiUrl } from '../../../temporal-config/client';
import { TaskQueues } from '../../../domain/task-queues';
import { PublishInput, ScheduledAction } from '../../../domain/approvals';
import { openScheduledChange, requestCancel, withdrawCancelRequest } from '../../../data/approvals/scheduled-changes';
import {
  cancelScheduleUpdate,
  PublishProgress,
  publishProgressQuery,
  publishWorkflowId,
  submittedUpdate,
  PUBLISH_WORKFLOW,
  PublishWorkflow,
  ARCHIVE_COMPONENT_WORKFLOW,
} from '../../../workflows/approvals/definitions';
import { SearchAttributeKeys } from '../../../domain/search-attributes';
import { fairShareOf } from '../../../domain/fairness';

/** How long the answer waits for the workflow to publish or to reach the manager's queue. */
const ANSWER_WITHIN_MS = 30000;

const publishStartOptions = (input: PublishInput) => ({
  workflowId: publishWorkflowId(input.componentType, input.resourceId),
  taskQueue: TaskQueues.approvals,
  args: [input] as [PublishInput],
  priority: fairShareOf('publish', input.siteId),
  typedSearchAttributes: [
    { key: SearchAttributeKeys.SiteId, value: input.siteId },
    { key: SearchAttributeKeys.ComponentType, value: input.componentType },
  ],
});

/** Starts `publish:{TYPE}:{id}` on the approvals queue; 409 APPROVAL_PENDING while one runs for the resource. */
export function startPublishWorkflow(temporal: AppDeps['temporal'], input: PublishInput) {
  return startWorkflow<PublishWorkflow>(temporal, PUBLISH_WORKFLOW, { ...publishStartOptions(input), alreadyRunningCode: 'APPROVAL_PENDING' });
}

/**
 * Answers once the run has taken its submission (its `submitted` Update): from then on it waits for a
 * decision on its first stage, so one sent at once is not refused as a stage it is not waiting for.
 */
export async function untilSubmitted(temporal: AppDeps['temporal'], workflowId: string): Promise<void> {
  try {
    await answerWithin(ANSWER_WITHIN_MS, temporal.client.workflow.getHandle(workflowId).executeUpdate(submittedUpdate));
  } catch (error) {
    throw temporalCallError(error, { late: `The publish run ${workflowId} was started but no approvals worker has taken it yet.` });
  }
}

export interface PublishAnswer {
  status: 200 | 202;
  body: Record<string, unknown>;
}

/** How far ahead a publish or archive may be scheduled. */
const LONGEST_SCHEDULE_MS = 366 * 24 * 60 * 60 * 1000;

/** A scheduled time, checked: in the future, and within a year. */
export function dueTimeOf(value: string | undefined, field: string): string | null {
  if (value === undefined) return null;
  const at = Date.parse(value);
  const now = Date.now();
  if (Number.isNaN(at) || at <= now || at - now > LONGEST_SCHEDULE_MS) {
    throw badRequest('VALIDATION_FAILED', `${field} is a time in the future, within a year.`, [
      { path: `/${field}`, message: 'must be in the future, within a year' },
    ]);
  }
  return new Date(at).toISOString();
}

/** What a publish run publishes: one component at a revision, or a release at a version. */
export interface PublishTarget {
  /** A component type's name, or RELEASE. */
  typeName: string;
  collection: string;
  id: string;
  siteId: string;
  title: string;
  revision: number;
}

/** A component's latest revision, as a publish run's target. */
export async function componentTarget(db: AppDeps['db'], type: ComponentType, row: ComponentRow): Promise<PublishTarget> {
  return {
    typeName: type.type,
    collection: type.collection,
    id: row.id,
    siteId: row.site_id,
    title: String(row.name),
    revision: (await latestRevision(db, type, row.id)) as number,
  };
}

/** How long a publish waits for the item's previous run to end once it has called the item back. */
const CALLED_BACK_RUN_ENDS_WITHIN_MS = 5000;

/**
 * Whether the item's run, met as a conflict, had called the item back and has now ended. Once it has
 * called back, it only closes the approval and tells the requester, while the item already shows the
 * outcome. A publish asked for in that moment is no second publish of a pending one, so it waits for that
 * run to end (5 s at most) and starts once it has. The run may also have ended between the conflict and
 * the question: then its last stage is an outcome, and the publish starts again at once.
 */
async function calledBackRunEnded(temporal: AppDeps['temporal'], workflowId: string): Promise<boolean> {
  const handle = temporal.client.workflow.getHandle<PublishWorkflow>(workflowId);
  const progress = await answerWithin(ANSWER_WITHIN_MS, handle.query(publishProgressQuery)).catch(() => null);
  if (progress?.stage === 'CALLING_BACK') {
    return answerWithin(CALLED_BACK_RUN_ENDS_WITHIN_MS, handle.result()).then(
      () => true,
      () => false,
    );
  }
  const described = await answerWithin(ANSWER_WITHIN_MS, handle.describe()).catch(() => null);
  return described !== null && described.status.name !== 'RUNNING';
}

/**
 * `POST {collection}/{id}/publish`, and `…/archive` with `archiveAt` (see startPublishOnce). A conflict
 * with the item's own run that is only closing is waited out once, as `calledBackRunEnded` says.
 */
export async function startPublish(
  deps: Pick<AppDeps, 'db' | 'temporal'>,
  args: { target: PublishTarget; identity: Identity; comment: string | null; action?: ScheduledAction; dueAt?: string | null },
): Promise<PublishAnswer> {
  try {
    return await startPublishOnce(deps, args);
  } catch (error) {
    const pending = error instanceof PlatformError && error.code === 'APPROVAL_PENDING';
    if (!pending || !(await calledBackRunEnded(deps.temporal, publishWorkflowId(args.target.typeName, args.target.id)))) throw error;
    return startPublishOnce(deps, args);
  }
}

/**
 * `POST {collection}/{id}/publish`, and `…/archive` with `archiveAt`: starts `publish:{TYPE}:{id}` with
 * its `submitted` Update (Update-with-Start, one call), which answers once the run has published the
 * latest revision (200), put it in the approval queue (202), or scheduled it (202).
 */
async function startPublishOnce(
  { db, temporal }: Pick<AppDeps, 'db' | 'temporal'>,
  args: { target: PublishTarget; identity: Identity; comment: string | null; action?: ScheduledAction; dueAt?: string | null },
): Promise<PublishAnswer> {
  const { target } = args;
  if (await openApprovalOf(db, target.typeName, target.id)) throw conflict('APPROVAL_PENDING', `${target.typeName} ${target.id} is waiting for approval.`);
  const input: PublishInput = {
    componentType: target.typeName,
    siteId: target.siteId,
    resourceId: target.id,
    revision: target.revision,
    callbackPath: `${target.collection}/${target.id}/approval-callback`,
    requestedBy: args.identity.id,
    title: target.title,
    comment: args.comment,
    correlationId: null,
    ...(args.dueAt ? { action: args.action ?? 'PUBLISH', dueAt: args.dueAt } : {}),
  };
  // A scheduled archive is a workflow of its own, under the same id: one change of an item at a time.
  const workflowType = input.action === 'ARCHIVE' ? ARCHIVE_COMPONENT_WORKFLOW : PUBLISH_WORKFLOW;
  const start = new WithStartWorkflowOperation<PublishWorkflow>(workflowType, { ...publishStartOptions(input), workflowIdConflictPolicy: 'FAIL' });
  let progress: PublishProgress;
  let runId: string;
  try {
    const submitted = async () => {
      const update = await temporal.client.workflow.startUpdateWithStart(submittedUpdate, {
        startWorkflowOperation: start,
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      });
      return { progress: await update.result(), runId: update.workflowRunId ?? '' };
    };
    ({ progress, runId } = await answerWithin(ANSWER_WITHIN_MS, submitted()));
  } catch (error) {
    // The id is taken: by a scheduled change (said so), or by a publish being submitted.
    if (error instanceof WorkflowExecutionAlreadyStartedError && (await openScheduledChange(db, target.typeName, target.id)))
      throw changeScheduled(target.typeName, target.id);
    throw temporalCallError(error, {
      alreadyRunning: ['APPROVAL_PENDING', `A publish of ${target.typeName} ${target.id} is already in progress.`],
      late: `The publish of ${target.typeName} ${target.id} was started but no approvals worker has taken it yet.`,
    });
  }
  const workflowId = publishWorkflowId(input.componentType, input.resourceId);
  const started = { workflowId, runId, uiUrl: workflowUiUrl(temporal, workflowId, runId) };
  if (progress.stage === 'PUBLISHED') return { status: 200, body: { status: 'PUBLISHED', publishedRev: progress.revision, ...started } };
  if (progress.stage === 'SCHEDULED') {
    const revision = progress.action === 'ARCHIVE' ? {} : { revision: progress.revision };
    return { status: 202, body: { status: 'SCHEDULED', action: progress.action, dueAt: progress.dueAt, ...revision, ...started } };
  }
  return {
    status: 202,
    body: { status: 'PENDING_APPROVAL', correlationId: progress.correlationId, ...(progress.dueAt ? { publishAt: progress.dueAt } : {}), ...started },
  };
}

const changeScheduled = (typeName: string, id: string) =>
  conflict('CHANGE_SCHEDULED', `A publish or archive of ${typeName} ${id} is scheduled: cancel it first (DELETE …/schedule).`);

/**
 * `DELETE {collection}/{id}/schedule`: records who cancels on the due change, then rings the run's
 * `cancel-schedule` Update, which confirms it there. A publish still waiting for its approval is not
 * cancelled here (409 APPROVAL_PENDING): a manager rejects it, or it is cancelled once approved.
 */
export async function cancelSchedule(
  { db, temporal }: Pick<AppDeps, 'db' | 'temporal'>,
  args: { typeName: string; id: string; identity: Identity },
): Promise<Record<string, unknown>> {
  const change = await openScheduledChange(db, args.typeName, args.id);
  if (!change) throw notFound(`Nothing is scheduled for ${args.typeName} ${args.id}.`);
  const handle = temporal.client.workflow.getHandle(change.workflow_id, change.run_id);
  const started = { workflowId: change.workflow_id, runId: change.run_id, uiUrl: workflowUiUrl(temporal, change.workflow_id, change.run_id) };
  try {
    const progress = await answerWithin(ANSWER_WITHIN_MS, handle.query(publishProgressQuery));
    if (progress.stage === 'PENDING_APPROVAL') {
      throw conflict('APPROVAL_PENDING', `${args.typeName} ${args.id} is waiting for approval: a manager rejects it, or it is cancelled once approved.`);
    }
    // The run has taken the change (it wakes a little before its time): nothing is recorded.
    if (progress.stage !== 'SCHEDULED')
      throw conflict('SCHEDULE_PASSED', `The scheduled ${change.action.toLowerCase()} of ${args.typeName} ${args.id} is under way.`);
    const cancel = { runId: change.run_id, requestedBy: args.identity.id };
    await requestCancel(db, cancel);
    // A cancel the run refuses (its time came meanwhile) is taken off the row again: left recorded, it would
    // let a later raw Update confirm it. One not confirmed in time stays: the run may still confirm it.
    const cancelled = await answerWithin(ANSWER_WITHIN_MS, handle.executeUpdate(cancelScheduleUpdate)).catch(async (error: unknown) => {
      if (error instanceof WorkflowUpdateFailedError) await withdrawCancelRequest(db, cancel);
      throw error;
    });
    return {
      status: cancelled.stage,
      action: change.action,
      dueAt: change.due_at.toISOString(),
      ...(change.revision ? { revision: change.revision } : {}),
      ...started,
    };
  } catch (error) {
    if (error instanceof PlatformError) throw error;
    throw temporalCallError(error, {
      notFound: ['SCHEDULE_PASSED', 'The scheduled run has ended.'],
      late: 'The scheduled run has not confirmed the cancel yet; asking again is safe.',
    });
  }
}
