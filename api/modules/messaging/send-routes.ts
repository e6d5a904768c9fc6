import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { hasRole, Identity, requireSiteMember } from '../../http/identity';
import { pageQueryFields, pageSchema, presentPage } from '../../http/pagination';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { badRequest, conflict, ErrorCode, forbidden, notFound, PlatformError } from '../../../lib/errors';
import { componentType } from '../../../data/content/component-types';
import { ComponentRow, findComponent } from '../../../data/content/components';
import { rowAtRevision } from '../../../data/content/revisions';
import { activeConfig } from '../../../data/messaging/channel-configs';
import {
  batchProgress,
  withinSendLimit,
  dropSendLogs,
  EmailLogRow,
  findEmailLog,
  insertEmailLog,
  listTemplateLogs,
  reopenFailedLog,
  restoreFailedLog,
} from '../../../data/messaging/email-logs';
import { insertRoleBatchLogs } from '../../../data/messaging/email-batches';
import { isEmailAddress } from '../../../domain/recipients';
import { DELIVERY_STATUSES, EmailCategory } from '../../../domain/messaging';
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
import { Instant, Nullable, SiteId, StartedRunFields, timestampsOf } from '../../http/common-schemas';

const Variables = Type.Record(Type.String(), Type.Unknown());
const Locale = Type.Union([Type.Literal('en'), Type.Literal('ar')]);
const SendBody = Type.Object(
  {
    templateId: Type.String({ format: 'uuid' }),
    to: Type.String({ minLength: 3, maxLength: 254 }),
    locale: Type.Optional(Locale),
    variables: Type.Optional(Variables),
    siteId: SiteId,
  },
  { additionalProperties: false },
);
const RoleSendBody = Type.Object(
  { templateId: Type.String({ format: 'uuid' }), roleKey: Type.String({ minLength: 1, maxLength: 64 }), siteId: SiteId, variables: Type.Optional(Variables) },
  { additionalProperties: false },
);
const TemplateParams = Type.Object({ templateId: Type.String({ format: 'uuid' }) });
const LogParams = Type.Object({ id: Type.String({ pattern: '^[0-9]{1,18}$' }) });
const DeliveryStatusSchema = Type.Union(DELIVERY_STATUSES.map((status) => Type.Literal(status)));
const LogsQuery = Type.Object({
  ...pageQueryFields,
  status: Type.Optional(Type.Union([Type.Literal('PENDING'), Type.Literal('SUCCESS'), Type.Literal('FAILED')])),
  deliveryStatus: Type.Optional(DeliveryStatusSchema),
});

const EmailLogSchema = Type.Object({
  id: Type.String(),
  templateId: Type.String(),
  templateRevision: Type.Integer(),
  batchId: Nullable(Type.String()),
  recipient: Type.String(),
  locale: Type.String(),
  status: Type.Union([Type.Literal('PENDING'), Type.Literal('SUCCESS'), Type.Literal('FAILED')]),
  deliveryStatus: DeliveryStatusSchema,
  error: Nullable(Type.String()),
  attempts: Type.Integer(),
  channel: Nullable(Type.String({ description: 'the configuration that took the message' })),
  missingVariables: Nullable(Type.Array(Type.String())),
  createdAt: Instant,
  updatedAt: Instant,
});
const SendAcceptedSchema = Type.Object({ logId: Type.String(), status: Type.Literal('PENDING'), ...StartedRunFields });
const RoleSendAcceptedSchema = Type.Object({ batchId: Type.String(), recipients: Type.Integer(), ...StartedRunFields });

const BatchProgressSchema = Type.Object({
  batchId: Type.String(),
  siteId: Type.String(),
  recipients: Type.Integer(),
  pending: Type.Integer(),
  success: Type.Integer(),
  failed: Type.Integer(),
  done: Type.Boolean(),
  workflowId: Type.String(),
  runId: Nullable(Type.String()),
  uiUrl: Nullable(Type.String()),
});

/** What a send (single or bulk) can be refused with: the template's checks, the limit, and starting its run. */
const SEND_REFUSALS: ErrorCode[] = [
  'NOT_FOUND',
  'TEMPLATE_NOT_PUBLISHED',
  'NO_ACTIVE_CONFIG',
  'RATE_LIMITED',
  'WORKFLOW_ALREADY_RUNNING',
  'TEMPORAL_UNAVAILABLE',
];

const SENDERS = access.roles('EDITOR', 'MANAGER');
const EMAIL_TEMPLATE = componentType('EMAIL_TEMPLATE')!;

export function presentEmailLog(row: EmailLogRow) {
  return {
    id: String(row.id),
    templateId: row.template_id,
    templateRevision: row.template_revision,
    batchId: row.batch_id,
    recipient: row.recipient,
    locale: row.locale,
    status: row.status,
    deliveryStatus: row.delivery_status,
    error: row.error,
    attempts: row.attempts,
    channel: row.channel,
    missingVariables: row.missing_variables,
    ...timestampsOf(row),
  };
}

/** Email sends (one recipient, or every directory user holding a role in a site), their logs and retries. */
/** The most a send's variables may weigh (as JSON): a bulk send reuses them for every recipient. */
const MAX_VARIABLES_BYTES = 64 * 1024;

function variablesFit(variables: Record<string, unknown> | undefined): void {
  const bytes = Buffer.byteLength(JSON.stringify(variables ?? {}), 'utf8');
  if (bytes > MAX_VARIABLES_BYTES)
    throw new PlatformError('PAYLOAD_TOO_LARGE', `variables weigh ${bytes} bytes as JSON; at most ${MAX_VARIABLES_BYTES} are accepted.`);
}

export function emailRoutes({ db, temporal, config }: AppDeps): AnyRoute[] {
  const sendLimit = (identity: Identity) => ({ userId: identity.id, limit: config.sendRateLimit, windowSeconds: config.sendRateWindowSeconds });
  /** The checks every send makes before it writes anything: template, publication, role, site, channel. Answers the template and its sent revision's category. */
  const sendableTemplate = async (identity: Identity, templateId: string, siteId: string): Promise<ComponentRow & { sentCategory: EmailCategory }> => {
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
  };
  const start = async (run: () => Promise<StartedWorkflow>, undo: () => Promise<unknown>): Promise<StartedWorkflow> => {
    try {
      return await run();
    } catch (error) {
      // Not started: the PENDING rows would never reach a final state.
      await undo();
      throw error instanceof PlatformError ? error : new PlatformError('TEMPORAL_UNAVAILABLE', 'The send could not be started; nothing was sent.');
    }
  };
  /**
   * Waits, a few seconds at most, for the run that failed a log to close: it writes FAILED as its last step
   * and closes a moment later, so a retry right after FAILED would otherwise meet it still running (409).
   */
  const deliveryClosed = async (logId: string): Promise<void> => {
    const handle = temporal.client.workflow.getHandle(emailWorkflowId(logId));
    for (let waited = 0; waited < 5000; waited += 100) {
      const running = await handle.describe().then(
        (description) => description.status.name === 'RUNNING',
        () => false,
      );
      if (!running) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  /** The run that delivers one logged email, searchable by its site; `undo` when it cannot start. */
  const startDelivery = (logId: string, siteId: string, undo: () => Promise<unknown>) =>
    start(
      () =>
        startWorkflow<SendEmailWorkflow>(temporal, SEND_EMAIL_WORKFLOW, {
          workflowId: emailWorkflowId(logId),
          taskQueue: TaskQueues.messaging,
          args: [{ logId }],
          typedSearchAttributes: [{ key: SearchAttributeKeys.SiteId, value: siteId }],
        }),
      undo,
    );

  return [
    defineRoute({
      method: 'post',
      path: '/api/email/send',
      tag: 'email',
      summary: "Send a published template to one address: the log row is written PENDING, then the send's workflow delivers it",
      access: SENDERS,
      body: SendBody,
      responses: { 202: { description: 'the log row, PENDING, and the run that delivers it', schema: SendAcceptedSchema } },
      errors: SEND_REFUSALS,
      idempotent: true,
      handler: async (ctx, { body, identity }) => {
        if (!isEmailAddress(body.to))
          throw badRequest('VALIDATION_FAILED', 'The recipient is not valid.', [{ path: 'body.to', message: 'must be one email address' }]);
        variablesFit(body.variables);
        const template = await sendableTemplate(identity, body.templateId, body.siteId);
        const log = await withinSendLimit(db, sendLimit(identity), (trx) =>
          insertEmailLog(trx, {
            siteId: body.siteId,
            templateId: template.id,
            templateRevision: template.published_rev as number,
            recipient: body.to,
            locale: body.locale ?? 'en',
            variables: body.variables ?? {},
            requestedBy: identity.id,
            category: template.sentCategory,
          }),
        );
        const logId = String(log.id);
        const started = await startDelivery(logId, body.siteId, () => dropSendLogs(db, { logId: log.id }));
        ctx.status = 202;
        ctx.body = { logId, status: 'PENDING', ...started };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/email/send/role',
      tag: 'email',
      summary: 'Send a published template to every directory user holding a role in a site, each in their own locale',
      access: SENDERS,
      body: RoleSendBody,
      responses: { 202: { description: 'the batch, how many recipients it has, and the run that sends it', schema: RoleSendAcceptedSchema } },
      errors: SEND_REFUSALS,
      idempotent: true,
      handler: async (ctx, { body, identity }) => {
        variablesFit(body.variables);
        const template = await sendableTemplate(identity, body.templateId, body.siteId);
        const batchId = randomUUID();
        const recipients = await withinSendLimit(db, sendLimit(identity), (trx) =>
          insertRoleBatchLogs(trx, {
            batchId,
            siteId: body.siteId,
            roleKey: body.roleKey,
            templateId: template.id,
            templateRevision: template.published_rev as number,
            variables: body.variables ?? {},
            requestedBy: identity.id,
          }),
        );
        const started = await start(
          () =>
            startWorkflow<SendEmailToRoleWorkflow>(temporal, SEND_EMAIL_TO_ROLE_WORKFLOW, {
              workflowId: emailRoleWorkflowId(batchId),
              taskQueue: TaskQueues.messaging,
              args: [{ batchId }],
              typedSearchAttributes: [{ key: SearchAttributeKeys.SiteId, value: body.siteId }],
            }),
          () => dropSendLogs(db, { batchId }),
        );
        ctx.status = 202;
        ctx.body = { batchId, recipients, ...started };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/email/batches/:batchId',
      tag: 'email',
      summary: "A bulk send's progress: how many of its recipients are pending, sent and failed, and its run",
      access: access.user,
      params: Type.Object({ batchId: Type.String({ format: 'uuid' }) }),
      responses: { 200: { description: "the batch's progress", schema: BatchProgressSchema } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params, identity }) => {
        const progress = await batchProgress(db, params.batchId);
        if (!progress) throw notFound(`No batch ${params.batchId}.`);
        requireSiteMember(identity, progress.siteId);
        const workflowId = emailRoleWorkflowId(params.batchId);
        // The run, while Temporal still holds it (past its retention the counts above are the whole story).
        const runId = await temporal.client.workflow
          .getHandle(workflowId)
          .describe()
          .then(
            (description) => description.runId,
            () => null,
          );
        const { pending, success, failed } = progress;
        ctx.body = {
          batchId: params.batchId,
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
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/email/send/:templateId/logs',
      tag: 'email',
      summary: "A template's send logs, newest first",
      access: access.user,
      params: TemplateParams,
      query: LogsQuery,
      responses: { 200: { description: 'a page of logs', schema: pageSchema(EmailLogSchema) } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params, query, identity }) => {
        const template = await findComponent(db, EMAIL_TEMPLATE, params.templateId);
        if (!template) throw notFound(`No email template ${params.templateId}.`);
        requireSiteMember(identity, template.site_id);
        ctx.body = presentPage(
          await listTemplateLogs(db, { templateId: params.templateId, status: query.status, deliveryStatus: query.deliveryStatus, page: query }),
          presentEmailLog,
        );
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/email/logs/:id/retry',
      tag: 'email',
      summary: 'Send a FAILED email again: its log goes back to PENDING',
      access: access.roles('ADMIN'),
      params: LogParams,
      responses: { 202: { description: 'the log row, PENDING, and the run that delivers it', schema: SendAcceptedSchema } },
      errors: ['NOT_FOUND', 'LOG_NOT_FAILED', 'WORKFLOW_ALREADY_RUNNING', 'TEMPORAL_UNAVAILABLE'],
      idempotent: true,
      handler: async (ctx, { params }) => {
        const log = await findEmailLog(db, params.id);
        if (!log) throw notFound(`No email log ${params.id}.`);
        const logId = String(log.id);
        if (log.status === 'FAILED') await deliveryClosed(logId);
        if (!(await reopenFailedLog(db, log.id))) throw conflict('LOG_NOT_FAILED', `Email log ${params.id} is ${log.status}; only a FAILED one is retried.`);
        const started = await startDelivery(logId, log.site_id, () =>
          restoreFailedLog(db, { id: log.id, error: log.error, deliveryStatus: log.delivery_status }),
        );
        ctx.status = 202;
        ctx.body = { logId, status: 'PENDING', ...started };
      },
    }),
  ];
}
