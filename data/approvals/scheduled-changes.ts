import { Knex } from 'knex';
import { conflict, notFound } from '../../lib/errors';
import { JobNames, JobOutcome } from '../../domain/job-log';
import { ScheduledAction } from '../../domain/approvals';
import { Page, PageRequest, paginate } from '../paging';
import { writeJobLog } from '../scheduler-job-log';

export const SCHEDULED_CHANGE_TABLE = 'workflow.scheduled_change';

/** HELD: a publish that needed approval only at its time: it is an approval request from then on, no longer a schedule. */
export type ScheduledChangeStatus = 'SCHEDULED' | 'DONE' | 'CANCELLED' | 'REJECTED' | 'HELD';

export interface ScheduledChangeRow {
  run_id: string;
  workflow_id: string;
  component_type: string;
  resource_id: string;
  site_id: string;
  action: ScheduledAction;
  revision: number | null;
  due_at: Date;
  requested_by: string;
  status: ScheduledChangeStatus;
  cancel_requested_by: string | null;
  created_at: Date;
  finished_at: Date | null;
}

export interface ScheduledChange {
  runId: string;
  workflowId: string;
  componentType: string;
  resourceId: string;
  siteId: string;
  action: ScheduledAction;
  revision: number | null;
  dueAt: string;
  requestedBy: string;
}

/**
 * Records a run's scheduled change as due; the same run twice records it once. One run at a time holds a
 * component's publish workflow id, so a row still due from another run is one whose run was terminated:
 * it is closed as CANCELLED first.
 */
export async function recordScheduledChange(db: Knex, change: ScheduledChange): Promise<void> {
  await db.transaction(async (trx) => {
    await trx(SCHEDULED_CHANGE_TABLE)
      .where({ component_type: change.componentType, resource_id: change.resourceId, status: 'SCHEDULED' })
      .whereNot({ run_id: change.runId })
      .update({ status: 'CANCELLED', finished_at: trx.fn.now() });
    await trx(SCHEDULED_CHANGE_TABLE)
      .insert({
        run_id: change.runId,
        workflow_id: change.workflowId,
        component_type: change.componentType,
        resource_id: change.resourceId,
        site_id: change.siteId,
        action: change.action,
        revision: change.revision,
        due_at: new Date(change.dueAt),
        requested_by: change.requestedBy,
      })
      .onConflict('run_id')
      .ignore();
  });
}

/** The change scheduled for a component, if one is due. */
export async function openScheduledChange(db: Knex, componentTypeName: string, resourceId: string): Promise<ScheduledChangeRow | undefined> {
  return db<ScheduledChangeRow>(SCHEDULED_CHANGE_TABLE).where({ component_type: componentTypeName, resource_id: resourceId, status: 'SCHEDULED' }).first();
}

/** The open scheduled changes of several resources of one type, by resource id: one query for a page. */
export async function openScheduledChangesOf(db: Knex, componentTypeName: string, resourceIds: string[]): Promise<Map<string, ScheduledChangeRow>> {
  if (resourceIds.length === 0) return new Map();
  const rows = await db<ScheduledChangeRow>(SCHEDULED_CHANGE_TABLE)
    .where({ component_type: componentTypeName, status: 'SCHEDULED' })
    .whereIn('resource_id', resourceIds);
  return new Map(rows.map((row) => [row.resource_id, row]));
}

/** The cancel endpoint's half: who asked, recorded on the due row before the run is told. */
export async function requestCancel(db: Knex, args: { runId: string; requestedBy: string }): Promise<void> {
  const updated = await db(SCHEDULED_CHANGE_TABLE).where({ run_id: args.runId, status: 'SCHEDULED' }).update({ cancel_requested_by: args.requestedBy });
  if (updated === 0) throw notFound('Nothing is scheduled for this entity any more.');
}

/**
 * Takes a cancel off a change that is still scheduled, when the run did not confirm it. Only the same
 * requester's: a later cancel by someone else stays.
 */
export async function withdrawCancelRequest(db: Knex, args: { runId: string; requestedBy: string }): Promise<void> {
  await db(SCHEDULED_CHANGE_TABLE)
    .where({ run_id: args.runId, status: 'SCHEDULED', cancel_requested_by: args.requestedBy })
    .update({ cancel_requested_by: null });
}

/** The run's half: a cancel counts only when the endpoint recorded it; answers who asked. */
export async function confirmCancel(db: Knex, runId: string): Promise<{ cancelledBy: string }> {
  const row = await db<ScheduledChangeRow>(SCHEDULED_CHANGE_TABLE).where({ run_id: runId }).first();
  if (!row?.cancel_requested_by) throw conflict('CANCEL_NOT_RECORDED', 'No cancel of this scheduled change was recorded by the platform.');
  return { cancelledBy: row.cancel_requested_by };
}

/**
 * Closes a run's scheduled change and writes its job-log row, in one transaction: a retry finds both
 * written. Published or archived at its time is SUCCESS; cancelled or rejected is SKIPPED, with why.
 */
export async function scheduledChangeOfRun(db: Knex, runId: string): Promise<ScheduledChangeRow | undefined> {
  return db<ScheduledChangeRow>(SCHEDULED_CHANGE_TABLE).where({ run_id: runId }).first();
}

/**
 * Closes the run's scheduled change and writes its job-log row. `failed`: the time came and the change was
 * attempted but did nothing (a release that published none of its items); the row says FAILED.
 */
export async function finishScheduledChange(
  db: Knex,
  args: { runId: string; status: Exclude<ScheduledChangeStatus, 'SCHEDULED'>; message: string; failed?: boolean },
): Promise<void> {
  await db.transaction(async (trx) => {
    const row = await trx<ScheduledChangeRow>(SCHEDULED_CHANGE_TABLE).where({ run_id: args.runId }).forUpdate().first();
    if (!row) return;
    if (row.status === 'SCHEDULED') {
      await trx(SCHEDULED_CHANGE_TABLE).where({ run_id: args.runId }).update({ status: args.status, finished_at: trx.fn.now() });
    }
    const outcome: JobOutcome = args.failed ? 'FAILED' : args.status === 'DONE' ? 'SUCCESS' : 'SKIPPED';
    await writeJobLog(trx, {
      siteId: row.site_id,
      jobName: row.action === 'PUBLISH' ? JobNames.scheduledPublish : JobNames.scheduledArchive,
      jobKey: args.runId,
      status: outcome,
      startedAt: row.created_at,
      finishedAt: new Date(),
      rowsAffected: args.status === 'DONE' && !args.failed ? 1 : 0,
      message: args.message,
    });
  });
}

/** What is due, soonest first: of the given sites, or of all of them; of one item with `resourceId`. */
export async function listScheduledChanges(
  db: Knex,
  args: { sites: string[] | 'ALL'; resourceId?: string; page: PageRequest },
): Promise<Page<ScheduledChangeRow>> {
  const query = db(SCHEDULED_CHANGE_TABLE).select('*').where({ status: 'SCHEDULED' });
  if (args.sites !== 'ALL') query.whereIn('site_id', args.sites);
  if (args.resourceId !== undefined) query.andWhere({ resource_id: args.resourceId });
  return paginate<ScheduledChangeRow>({ query, ...args.page, timeColumn: 'due_at', idColumn: 'run_id', order: 'soonest-first' });
}

/**
 * How many milliseconds the database's clock has left until `instant` (zero or less once it is there). A
 * scheduled change's transaction starts once this reaches zero, so the time it records (`now()`, the
 * transaction's start) is never before its due time, whatever the worker's own clock says.
 */
export async function msUntilByDatabase(db: Knex, instant: string): Promise<number> {
  const { rows } = await db.raw<{ rows: Array<{ left_ms: number }> }>('select extract(epoch from (?::timestamptz - clock_timestamp())) * 1000 as left_ms', [
    instant,
  ]);
  return Number(rows[0].left_ms);
}
