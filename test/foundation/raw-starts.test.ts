import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal as proto } from '@temporalio/proto';
import { attachPlatform, TestPlatform } from '../support/platform';
import { recordHistory } from '../support/histories';

/**
 * Every workflow checks its own input: a run started on Temporal directly (the CLI, the Web UI, any client
 * of the frontend), with values the API would never send, fails at once with VALIDATION_FAILED and schedules
 * no activity. Before, a negative siteConcurrency failed the archive run's every workflow task, retried for
 * ever, and ids went to activities unchecked.
 */
let platform: TestPlatform;

beforeAll(async () => {
  platform = await attachPlatform();
  await platform.startWorker(['archival', 'messaging', 'approvals', 'deployments']);
});

afterAll(async () => {
  await platform?.close();
});

const timings = { healthTimeoutSeconds: 30, drainSeconds: 1 };
const ARCHIVE_SENT_TO_PUBLISH = {
  componentType: 'PAGE',
  siteId: 'site-1',
  resourceId: '00000000-0000-4000-8000-000000000003',
  revision: 1,
  callbackPath: '/api/content/pages/00000000-0000-4000-8000-000000000003/approval-callback',
  requestedBy: 'm',
  title: null,
  comment: null,
  correlationId: null,
  action: 'ARCHIVE',
  dueAt: '2099-01-01T00:00:00.000Z',
};
/** The runs kept as saved histories (test/histories), for the replay test: publishComponent's refusal of an archive. */
const HISTORY_NAMES = new Map<unknown, string>([[ARCHIVE_SENT_TO_PUBLISH, 'publish-archive-refused']]);
const hostile: Array<[string, string, unknown]> = [
  ['archiveLogs', 'archival', { logType: 'EMAIL_LOG', siteConcurrency: -1 }],
  ['archiveLogs', 'archival', { logType: 'EMAIL_LOG', maxRowsPerPart: 1e12 }],
  ['archiveLogs', 'archival', { logType: 'PASSWORDS' }],
  ['scheduledArchive', 'archival', { logType: 'EMAIL_LOG; drop' }],
  ['restoreArchive', 'archival', { assetId: '../../etc/passwd', requestedBy: 'mallory' }],
  [
    'publishComponent',
    'approvals',
    {
      componentType: 'PAGE',
      siteId: 'site-1',
      resourceId: 'not-an-id',
      revision: -1,
      callbackPath: '/api/content/pages/x/approval-callback',
      requestedBy: 'm',
      title: null,
      comment: null,
      correlationId: null,
    },
  ],
  ['publishComponent', 'approvals', null],
  ['archiveComponent', 'approvals', null],
  // An archive with no due time: the run recorded a due time of 1970, then waited for ever, holding the item's id.
  [
    'publishComponent',
    'approvals',
    {
      componentType: 'PAGE',
      siteId: 'site-1',
      resourceId: '00000000-0000-4000-8000-000000000002',
      revision: 1,
      callbackPath: '/api/content/pages/00000000-0000-4000-8000-000000000002/approval-callback',
      requestedBy: 'm',
      title: null,
      comment: null,
      correlationId: null,
      action: 'ARCHIVE',
    },
  ],
  // An archive sent to the publish run: archives are archiveComponent runs now, and only those begun before
  // the split go on in publishComponent.
  ['publishComponent', 'approvals', ARCHIVE_SENT_TO_PUBLISH],
  // A publish's input sent to the archive run: it would otherwise archive the page that was to be published.
  [
    'archiveComponent',
    'approvals',
    {
      componentType: 'PAGE',
      siteId: 'site-1',
      resourceId: '00000000-0000-4000-8000-000000000001',
      revision: 1,
      callbackPath: '/api/content/pages/00000000-0000-4000-8000-000000000001/approval-callback',
      requestedBy: 'm',
      title: null,
      comment: null,
      correlationId: null,
    },
  ],
  ['sendEmail', 'messaging', { logId: '1 or 1=1' }],
  ['sendEmailToRole', 'messaging', { batchId: 'everyone' }],
  ['deployService', 'deployments', { deploymentId: randomUUID(), serviceName: '../core', ...timings }],
  ['deployService', 'deployments', { deploymentId: randomUUID(), serviceName: 'fine-service', healthTimeoutSeconds: 1e9, drainSeconds: 1 }],
  ['scaleService', 'deployments', { serviceName: 'Fine Service', ...timings }],
  ['undeployService', 'deployments', { serviceName: 'x' }],
  ['reconcileServices', 'deployments', { healthTimeoutSeconds: 'soon', drainSeconds: 1 }],
  ['obtainCertificate', 'deployments', { hostname: 'evil.example.test/../../x', renewal: false }],
  ['obtainCertificate', 'deployments', { hostname: 'Shop.Example.test', renewal: false }],
  ['renewCertificates', 'deployments', { retryAfterSeconds: -1 }],
  ['renewCertificates', 'deployments', { retryAfterSeconds: 60, acme: 'no' }],
  ['pingWorker', 'archival', { taskQueue: 'elsewhere' }],
];

test.each(hostile)('a raw start of %s on %s with %j fails VALIDATION_FAILED and schedules no activity', async (workflowType, taskQueue, input) => {
  const handle = await platform.temporal.client.workflow.start(workflowType, {
    taskQueue,
    workflowId: `raw-input-${randomUUID()}`,
    args: [input],
    workflowTaskTimeout: '5s',
  });
  const outcome = await Promise.race([
    handle.result().then(
      () => 'completed',
      (error: unknown) => error,
    ),
    new Promise((resolve) => setTimeout(() => resolve('still running after 20 s'), 20000)),
  ]);
  expect(outcome).toBeInstanceOf(WorkflowFailedError);
  let cause: unknown = (outcome as WorkflowFailedError).cause;
  while (cause && !(cause instanceof ApplicationFailure)) cause = (cause as { cause?: unknown }).cause;
  expect((cause as ApplicationFailure).type).toBe('VALIDATION_FAILED');
  expect((cause as ApplicationFailure).nonRetryable).toBe(true);
  const history = await handle.fetchHistory();
  expect(history.events!.filter((event) => event.eventType === proto.api.enums.v1.EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)).toEqual([]);
  const historyName = HISTORY_NAMES.get(input);
  if (historyName) await recordHistory(platform.temporal, { workflowId: handle.workflowId, name: historyName });
  await handle.terminate().catch(() => undefined);
});
