import { randomUUID } from 'node:crypto';
import { AppDeps } from '../../deps';
import { hasRole, Identity, requireSiteMember } from '../../http/identity';
import { badRequest, conflict, forbidden, notFound, PlatformError } from '../../../lib/errors';
import { componentType } from '../../../data/content/component-types';
import { ComponentRow, findComponent } from '../../../data/content/components';
import { rowAtRevision } from '../../../data/content/revisions';
import { activeConfig } from '../../../data/messaging/channel-configs';
import {
  batchProgress,
  listTemplateLogs,
  withinSendLimit,
  dropSendLogs,
  findEmailLog,
  insertEmailLog,
  reopenFailedLog,
  restoreFailedLog,
} from '../../../data/messaging/email-logs';
import { insertRoleBatchLogs } from '../../../data/messaging/email-batches';
import { isEmailAddress } from '../../../domain/recipients';
import { DeliveryStatus, EmailCategory } from '../../../domain/messaging';
import { startWorkflow, StartedWorkflow, workflowUiUrl } from '../../../temporal-config/client';
import { TaskQueues } from '../../../domain/task-queues';
import {
  emailRoleWorkflowId,
  emailWorkflowId,
  SEND_EMAIL_TO_ROLE_WORKFLOW,
  SEND_EMAIL_WORKFLOW,
  SendEmailToRoleWorkflow,
  SendEmailWorkflow,
} from '../../../workflows/messaging/definitions';
import { SearchAttributeKeys } from '../../../domain/search-attributes';
import { PageRequest } from '../../../data/paging';
import { askUntil, pauseMs } from '../../../lib/poll-until';
import { fairShareOf } from '../../../domain/fairness';

// What the send routes do: each a command the route calls once it has parsed and authorised.

type Deps = Pick<AppDeps, 'db' | 'temporal' | 'config'>;
type Variables = Record<string, unknown> | undefined;

const EMAIL_TEMPLATE = componentType('EMAIL_TEMPLATE')!;

/** The most a send's variables may weigh (as JSON): a bulk send reuses them for every recipient. */
const MAX_VARIABLES_BYTES = 64 * 1024;

function variablesFit(variables: Variables): void {
  const bytes = Buffer.byteLength(JSON.stringify(variables ?? {}), 'utf8');
  if (bytes > MAX_VARIABLES_BYTES)
    throw new PlatformError('PAYLOAD_TOO_LARGE', `variables weigh ${bytes} bytes as JSON; at most ${MAX_VARIABLES_BYTES} are accepted.`);
}

const sendLimit = (config: Deps['config'], identity: Identity) => ({
  userId: identity.id,
  limit: config.limits.sendRateLimit,
  windowSeconds: config.limits.sendRateWindowSeconds,
});

/** The checks every send makes before it writes anything: template, publication, role, site, channel. Answers the template and its sent revision's category. */
async function sendableTemplate({ db }: Deps, identity: Identity, templateId: string, siteId: string): Promise<ComponentRow & { sentCategory: EmailCategory }> {
  requireSiteMember(identity, siteId);
  const template = await findComponent(db, EMAIL_TEMPLATE, templateId);
  if (!template || template.site_id !== siteId) throw notFound(`Site ${siteId} has no email template ${templateId}.`);
  if (template.published_rev === null) throw conflict('TEMPLATE_NOT_PUBLISHED', `Email template ${templateId} has never been published.`);
  // The restriction that binds is the one of the revision that is sent (the published one), not the draft's.
  const published = await rowAtRevision(db, EMAIL_TEMPLATE, template.id, template.published_rev);
  const roleKey = (published?.role_key ?? null) as string | null;
  if (roleKey && !hasRole(identity, [roleKey])) throw forbidden(`Email template ${templateId} may be sent only by holders of ${roleKey}.`);
  if (!(await activeConfig(db, 'EMAIL'))) throw conflict('NO_ACTIVE_CONFIG', 'No email configuration is active.');
  return { ...template, sentCategory: published?.category === 'bulk' ? 'bulk' : 'transactional' };
}

/** Starts a send's run; when it cannot start, `undo` takes back its PENDING rows, which would never reach a final state. */
async function startOrUndo(run: () => Promise<StartedWorkflow>, undo: () => Promise<unknown>): Promise<StartedWorkflow> {
  try {
    return await run();
  } catch (error) {
    await undo();
    throw error instanceof PlatformError ? error : new PlatformError('TEMPORAL_UNAVAILABLE', 'The send could not be started; nothing was sent.');
  }
}

/** The run that delivers one logged email, searchable by its site; `undo` when it cannot start. */
const startDelivery = ({ temporal }: Deps, logId: string, siteId: string, undo: () => Promise<unknown>) =>
  startOrUndo(
    () =>
      startWorkflow<SendEmailWorkflow>(temporal, SEND_EMAIL_WORKFLOW, {
        workflowId: emailWorkflowId(logId),
        taskQueue: TaskQueues.messaging,
        args: [{ logId }],
        priority: fairShareOf('singleSend', siteId),
        typedSearchAttributes: [{ key: SearchAttributeKeys.SiteId, value: siteId }],
      }),
    undo,
  );

/** One published template to one address: the log row is written PENDING, then the send's run delivers it. */
export async function sendOne(
  deps: Deps,
  identity: Identity,
  send: { to: string; templateId: string; siteId: string; locale?: 'en' | 'ar'; variables?: Record<string, unknown> },
) {
  if (!isEmailAddress(send.to))
    throw badRequest('VALIDATION_FAILED', 'The recipient is not valid.', [{ path: 'body.to', message: 'must be one email address' }]);
  variablesFit(send.variables);
  const template = await sendableTemplate(deps, identity, send.templateId, send.siteId);
  const log = await withinSendLimit(deps.db, sendLimit(deps.config, identity), (trx) =>
    insertEmailLog(trx, {
      siteId: send.siteId,
      templateId: template.id,
      templateRevision: template.published_rev as number,
      recipient: send.to,
      locale: send.locale ?? 'en',
      variables: send.variables ?? {},
      requestedBy: identity.id,
      category: template.sentCategory,
    }),
  );
  const logId = String(log.id);
  const started = await startDelivery(deps, logId, send.siteId, () => dropSendLogs(deps.db, { logId: log.id }));
  return { logId, status: 'PENDING' as const, ...started };
}

/** One published template to every directory user holding a role in a site: a batch of PENDING rows, and its run. */
export async function sendToRole(
  deps: Deps,
  identity: Identity,
  send: { roleKey: string; templateId: string; siteId: string; variables?: Record<string, unknown> },
) {
  variablesFit(send.variables);
  const template = await sendableTemplate(deps, identity, send.templateId, send.siteId);
  const batchId = randomUUID();
  const recipients = await withinSendLimit(deps.db, sendLimit(deps.config, identity), (trx) =>
    insertRoleBatchLogs(trx, {
      batchId,
      siteId: send.siteId,
      roleKey: send.roleKey,
      templateId: template.id,
      templateRevision: template.published_rev as number,
      variables: send.variables ?? {},
      requestedBy: identity.id,
    }),
  );
  const started = await startOrUndo(
    () =>
      startWorkflow<SendEmailToRoleWorkflow>(deps.temporal, SEND_EMAIL_TO_ROLE_WORKFLOW, {
        workflowId: emailRoleWorkflowId(batchId),
        taskQueue: TaskQueues.messaging,
        args: [{ batchId }],
        priority: fairShareOf('bulkSend', send.siteId),
        typedSearchAttributes: [{ key: SearchAttributeKeys.SiteId, value: send.siteId }],
      }),
    () => dropSendLogs(deps.db, { batchId }),
  );
  return { batchId, recipients, ...started };
}

/**
 * Waits, a few seconds at most, for the run that failed a log to close: it writes FAILED as its last step
 * and closes a moment later, so a retry right after FAILED would otherwise meet it still running (409).
 */
async function deliveryClosed({ temporal }: Deps, logId: string): Promise<void> {
  const handle = temporal.client.workflow.getHandle(emailWorkflowId(logId));
  await askUntil(async (attempt) => {
    const running = await handle.describe().then(
      (description) => description.status.name === 'RUNNING',
      () => false,
    );
    return !running || attempt >= 50 ? true : undefined;
  }, pauseMs(100));
}

/** A FAILED email sent again: its log goes back to PENDING, and a new run delivers it. */
export async function retryFailedEmail(deps: Deps, id: string) {
  const log = await findEmailLog(deps.db, id);
  if (!log) throw notFound(`No email log ${id}.`);
  const logId = String(log.id);
  if (log.status === 'FAILED') await deliveryClosed(deps, logId);
  if (!(await reopenFailedLog(deps.db, log.id))) throw conflict('LOG_NOT_FAILED', `Email log ${id} is ${log.status}; only a FAILED one is retried.`);
  const started = await startDelivery(deps, logId, log.site_id, () =>
    restoreFailedLog(deps.db, { id: log.id, error: log.error, deliveryStatus: log.delivery_status }),
  );
  return { logId, status: 'PENDING' as const, ...started };
}

/** A bulk send's progress, to a member of its site: how many of its recipients are pending, sent and failed, and its run. */
export async function batchProgressOf({ db, temporal }: Deps, identity: Identity, batchId: string) {
  const progress = await batchProgress(db, batchId);
  if (!progress) throw notFound(`No batch ${batchId}.`);
  requireSiteMember(identity, progress.siteId);
  const workflowId = emailRoleWorkflowId(batchId);
  // The run, while Temporal still holds it (past its retention the counts above are the whole story).
  const runId = await temporal.client.workflow
    .getHandle(workflowId)
    .describe()
    .then(
      (description) => description.runId,
      () => null,
    );
  const { pending, success, failed } = progress;
  return {
    batchId,
    siteId: progress.siteId,
    recipients: pending + success + failed,
    pending,
    success,
    failed,
    done: pending === 0,
    workflowId,
    runId,
    uiUrl: runId ? workflowUiUrl(temporal, workflowId, runId) : null,
  };
}

/** A template's send logs, newest first, to a member of its site. */
export async function templateLogs(
  { db }: Deps,
  identity: Identity,
  templateId: string,
  query: PageRequest & { status?: string; deliveryStatus?: DeliveryStatus },
) {
  const template = await findComponent(db, EMAIL_TEMPLATE, templateId);
  if (!template) throw notFound(`No email template ${templateId}.`);
  requireSiteMember(identity, template.site_id);
  return listTemplateLogs(db, { templateId, status: query.status, deliveryStatus: query.deliveryStatus, page: query });
}
