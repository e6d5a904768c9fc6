import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { badRequest, notFound } from '../../../lib/errors';
import { assertOutboundAllowed, OutboundPolicy, outboundPolicyOf } from '../../../adapters/messaging/outbound';
import { CallbackRefused, postStatusCallback } from '../../../adapters/messaging/status-callback';
import { deleteStatusCallback, findStatusCallback, openCallbackSecret, saveStatusCallback, StatusCallbackRow } from '../../../data/messaging/status-callbacks';
import { secretKeysOf } from '../../../lib/secrets';
import { Instant, SiteId } from '../../http/common-schemas';
import { callbackUrlProblem } from '../../../domain/messaging';

const SiteParams = Type.Object({ siteId: SiteId });
const CallbackBody = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'where each change of a message’s delivery status is POSTed' }),
    secret: Type.Optional(
      Type.String({ minLength: 32, maxLength: 200, description: 'the HMAC-SHA256 signing key (write-only); required the first time, kept when left out' }),
    ),
  },
  { additionalProperties: false },
);
const CallbackSchema = Type.Object({ siteId: Type.String(), url: Type.String(), hasSecret: Type.Boolean(), updatedAt: Instant });
const TestedSchema = Type.Object({
  delivered: Type.Boolean(),
  status: Type.Union([Type.Integer(), Type.Null()]),
  detail: Type.String(),
});

/** The event a test sends: marked `test`, of no message. */
const testEvent = (siteId: string) => ({
  id: randomUUID(),
  type: 'test' as const,
  siteId,
  messageId: null,
  to: null,
  status: 'test',
  previousStatus: null,
  statusAt: new Date().toISOString(),
  channel: null,
  category: null,
});

const secretMissing = () =>
  badRequest('VALIDATION_FAILED', 'The callback is not valid.', [{ path: 'body.secret', message: 'is required when the site has no callback yet' }]);

/** Checks a callback's URL (its shape, and that the outbound policy allows it) and saves it with its secret. */
async function setCallback(
  deps: Pick<AppDeps, 'db' | 'config'> & { policy: OutboundPolicy },
  callback: { siteId: string; url: string; secret?: string; by: string },
): Promise<StatusCallbackRow> {
  const urlProblem = callbackUrlProblem(callback.url, deps.config.production);
  if (urlProblem) throw badRequest('VALIDATION_FAILED', 'The callback is not valid.', [{ path: 'body.url', message: urlProblem }]);
  if (callback.secret === undefined && !(await findStatusCallback(deps.db, callback.siteId))) throw secretMissing();
  try {
    await assertOutboundAllowed(callback.url, deps.policy);
  } catch (error) {
    throw badRequest('OUTBOUND_NOT_ALLOWED', (error as Error).message);
  }
  const saved = await saveStatusCallback(deps.db, secretKeysOf(deps.config), callback);
  // Removed meanwhile, and no secret given: nothing was written.
  if (!saved) throw secretMissing();
  return saved;
}

/** The answer: the secret is only said to exist. */
function presentCallback(row: StatusCallbackRow) {
  return { siteId: row.site_id, url: row.url, hasSecret: Boolean(row.secret), updatedAt: new Date(row.updated_at).toISOString() };
}

/**
 * Each site's status callback (ADMIN): the URL that hears of every change of its messages' delivery status,
 * signed with the site's secret, and a test event sent on demand.
 */
export function callbackRoutes({ db, config, resolveHost }: AppDeps): AnyRoute[] {
  const ADMIN = access.roles('ADMIN');
  const base = '/api/settings/callbacks/:siteId';
  const policy = () => outboundPolicyOf(config, 'callback', resolveHost);
  const callbackOr404 = async (siteId: string) => {
    const row = await findStatusCallback(db, siteId);
    if (!row) throw notFound(`Site ${siteId} has no status callback.`);
    return row;
  };
  return [
    defineRoute({
      method: 'get',
      path: base,
      tag: 'settings',
      summary: "A site's status callback (its secret never shown)",
      access: ADMIN,
      params: SiteParams,
      responses: { 200: { description: 'the callback', schema: CallbackSchema } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params }) => {
        ctx.body = presentCallback(await callbackOr404(params.siteId));
      },
    }),
    defineRoute({
      method: 'put',
      path: base,
      tag: 'settings',
      summary: "Set a site's status callback: its URL and signing secret (a secret left out keeps the stored one)",
      access: ADMIN,
      params: SiteParams,
      body: CallbackBody,
      responses: { 200: { description: 'the callback', schema: CallbackSchema } },
      errors: ['OUTBOUND_NOT_ALLOWED'],
      handler: async (ctx, { params, body, identity }) => {
        const saved = await setCallback({ db, config, policy: policy() }, { siteId: params.siteId, ...body, by: identity.id });
        ctx.body = presentCallback(saved);
      },
    }),
    defineRoute({
      method: 'delete',
      path: base,
      tag: 'settings',
      summary: "Remove a site's status callback: its changes are no longer sent (events not yet delivered are dropped)",
      access: ADMIN,
      params: SiteParams,
      responses: { 204: { description: 'removed' } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params }) => {
        if (!(await deleteStatusCallback(db, params.siteId))) throw notFound(`Site ${params.siteId} has no status callback.`);
        ctx.status = 204;
      },
    }),
    defineRoute({
      method: 'post',
      path: `${base}/test`,
      tag: 'settings',
      summary: "Send a signed test event to a site's callback now, and say what the receiver answered",
      access: ADMIN,
      params: SiteParams,
      responses: { 200: { description: 'what the receiver answered', schema: TestedSchema } },
      errors: ['NOT_FOUND', 'SECRET_INTEGRITY_FAILED'],
      handler: async (ctx, { params }) => {
        const row = await callbackOr404(params.siteId);
        const secret = openCallbackSecret(row, secretKeysOf(config));
        const event = testEvent(row.site_id);
        try {
          const status = await postStatusCallback({ url: row.url, secret, event, policy: policy() });
          ctx.body = { delivered: true, status, detail: `the receiver answered ${status}` };
        } catch (error) {
          ctx.body = { delivered: false, status: error instanceof CallbackRefused ? error.status : null, detail: (error as Error).message };
        }
      },
    }),
  ];
}
