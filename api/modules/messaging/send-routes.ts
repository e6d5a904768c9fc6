import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { pageQueryFields, pageSchema, presentPage } from '../../http/pagination';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { ErrorCode } from '../../../lib/errors';
import { EmailLogRow } from '../../../data/messaging/email-logs';
import { DELIVERY_STATUSES } from '../../../domain/messaging';
import { batchProgressOf, retryFailedEmail, sendOne, sendToRole, templateLogs } from './send-commands';
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
export function emailRoutes(deps: AppDeps): AnyRoute[] {
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
        ctx.status = 202;
        ctx.body = await sendOne(deps, identity, body);
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
        ctx.status = 202;
        ctx.body = await sendToRole(deps, identity, body);
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
        ctx.body = await batchProgressOf(deps, identity, params.batchId);
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
        ctx.body = presentPage(await templateLogs(deps, identity, params.templateId, query), presentEmailLog);
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
        ctx.status = 202;
        ctx.body = await retryFailedEmail(deps, params.id);
      },
    }),
  ];
}
