import { Client, ScheduleNotFoundError, ScheduleOptions, ScheduleOverlapPolicy } from '@temporalio/client';
import { SearchAttributeKeys } from '../domain/search-attributes';
import { LOG_TYPES } from '../domain/archival';
import { archiveScheduleId, ScheduledArchiveInput } from '../workflows/archival/definitions';
import {
  CERTIFICATE_RENEWAL_SCHEDULE_ID,
  InstanceTimings,
  RECONCILE_SCHEDULE_ID,
  ReconcileServicesInput,
  RENEW_CERTIFICATES_WORKFLOW,
  RenewCertificatesInput,
} from '../workflows/deploy/definitions';
import { TaskQueues } from '../domain/task-queues';
import { FairShare, fairShareOf } from '../domain/fairness';
import { REVISION_RETENTION_SCHEDULE_ID, REVISION_RETENTION_WORKFLOW } from '../workflows/approvals/definitions';

/**
 * A schedule whose runs carry their fair share (domain/fairness.ts). The SDK sends an action's `priority`,
 * though its type for a new schedule leaves the field out.
 */
export type PlatformSchedule = ScheduleOptions & { action: ScheduleOptions['action'] & { priority: FairShare } };

/**
 * Makes a schedule look like `options`: describe it, then update it when it exists, create it when not.
 * Safe to call on every worker start, from several workers at once.
 */
export async function ensureSchedule(client: Client, options: PlatformSchedule): Promise<'created' | 'updated'> {
  const handle = client.schedule.getHandle(options.scheduleId);
  try {
    await handle.describe();
  } catch (error) {
    if (!(error instanceof ScheduleNotFoundError)) throw error;
    try {
      await client.schedule.create(options);
      return 'created';
    } catch (createError) {
      if ((createError as Error).name !== 'ScheduleAlreadyRunning') throw createError;
    }
  }
  await handle.update((previous) => ({ ...previous, spec: options.spec, action: options.action, policies: { ...previous.policies, ...options.policies } }));
  return 'updated';
}

/** One schedule per log type, running `scheduledArchive` on `ARCHIVE_CRON` (UTC). */
export async function ensureArchiveSchedules(client: Client, cron: string): Promise<void> {
  for (const logType of LOG_TYPES) {
    const args: [ScheduledArchiveInput] = [{ logType }];
    await ensureSchedule(client, {
      scheduleId: archiveScheduleId(logType),
      spec: { cronExpressions: [cron], timezone: 'UTC' },
      action: {
        type: 'startWorkflow',
        workflowType: 'scheduledArchive',
        workflowId: `${archiveScheduleId(logType)}-run`,
        taskQueue: TaskQueues.archival,
        args,
        priority: fairShareOf('archiveRun'),
        typedSearchAttributes: [{ key: SearchAttributeKeys.LogType, value: logType }],
      },
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
      memo: { description: `Daily archive of ${logType}` },
    });
  }
}

/** The deploy reconcile: every `everySeconds`, running services are brought back to their desired instances. */
export async function ensureReconcileSchedule(client: Client, args: { everySeconds: number } & InstanceTimings): Promise<void> {
  const input: [ReconcileServicesInput] = [{ healthTimeoutSeconds: args.healthTimeoutSeconds, drainSeconds: args.drainSeconds }];
  await ensureSchedule(client, {
    scheduleId: RECONCILE_SCHEDULE_ID,
    spec: { intervals: [{ every: `${args.everySeconds} seconds` }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'reconcileServices',
      workflowId: `${RECONCILE_SCHEDULE_ID}-run`,
      taskQueue: TaskQueues.deployments,
      args: input,
      priority: fairShareOf('reconcile'),
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
    memo: { description: 'Replaces dead instances of deployed services' },
  });
}

/** Revision retention, daily on `REVISION_RETENTION_CRON` (UTC): every rule prunes what it covers. */
export async function ensureRevisionRetentionSchedule(client: Client, cron: string): Promise<void> {
  await ensureSchedule(client, {
    scheduleId: REVISION_RETENTION_SCHEDULE_ID,
    spec: { cronExpressions: [cron], timezone: 'UTC' },
    action: {
      type: 'startWorkflow',
      workflowType: REVISION_RETENTION_WORKFLOW,
      workflowId: `${REVISION_RETENTION_SCHEDULE_ID}-run`,
      taskQueue: TaskQueues.approvals,
      args: [],
      priority: fairShareOf('housekeeping'),
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
    memo: { description: 'Prunes revisions by the revision retention rules' },
  });
}

/**
 * Certificate renewal: every `everySeconds`, a run for each certificate past two thirds of its lifetime (with
 * an ACME server), and a word to the owners of each upload past two thirds of its own (with or without one).
 */
export async function ensureCertificateRenewalSchedule(client: Client, args: { everySeconds: number } & RenewCertificatesInput): Promise<void> {
  const input: [RenewCertificatesInput] = [{ retryAfterSeconds: args.retryAfterSeconds, acme: args.acme }];
  await ensureSchedule(client, {
    scheduleId: CERTIFICATE_RENEWAL_SCHEDULE_ID,
    spec: { intervals: [{ every: `${args.everySeconds} seconds` }] },
    action: {
      type: 'startWorkflow',
      workflowType: RENEW_CERTIFICATES_WORKFLOW,
      workflowId: `${CERTIFICATE_RENEWAL_SCHEDULE_ID}-run`,
      taskQueue: TaskQueues.deployments,
      args: input,
      priority: fairShareOf('housekeeping'),
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
    memo: { description: "Renews the edge's ACME certificates, and warns of uploaded ones that end soon" },
  });
}
