import { randomUUID } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';
import { badRequest, conflict, notFound } from '../../../lib/errors';
import { passwordDestinationChanges } from '../../../domain/messaging';
import {
  activateConfig,
  activeConfig,
  activeConfigs,
  Channel,
  ChannelConfigRow,
  deleteConfig,
  findConfig,
  listConfigs,
  openPasswords,
  orderActiveConfigs,
  saveConfig,
  sealPasswords,
} from '../../../data/messaging/channel-configs';
import { isEmailAddress, isPhoneNumber } from '../../../domain/recipients';
import { DeliveryFailure } from '../../../adapters/messaging/delivery-failure';
import { rendersWellFormed, renderPeerRequest } from '../../../adapters/messaging/http-peer';
import {
  assertOutboundAllowed,
  checkedAddress,
  isHostNameOrAddress,
  OutboundRefused,
  outboundPolicyOf,
  peerPurpose,
  smtpRelayUrl,
} from '../../../adapters/messaging/outbound';
import { sendThroughChannels } from '../../../adapters/messaging/send-message';
import { verifySmtp } from '../../../adapters/messaging/smtp';
import { secretKeysOf } from '../../../lib/secrets';
import { pageQueryFields, pageSchema, presentPage } from '../../http/pagination';
import { integrationLogOf } from '../../../data/messaging/integration-log';
import { awaitTurnOn, forgetPace } from '../../../data/messaging/channel-pace';

import {
  EmailConfigBody,
  SmsConfigBody,
  ConfigBody,
  IdParams,
  OrderBody,
  ValidateBody,
  ProcessBody,
  ConfigSchema,
  ValidatedSchema,
  ProcessedSchema,
  SAMPLE_VALUES,
} from './channel-schemas';
import { presentConfig } from './present-channel-config';
import { columnsOf, transportIssues } from './channel-config-body';

/**
 * `/api/settings/email` or `/api/settings/sms`: the channel's configurations. `activate` makes one the only
 * active configuration (as the first wave had it); `order` makes several active, tried in order.
 */
function channelRoutes({ db, config, resolveHost }: AppDeps, channel: Channel): AnyRoute[] {
  const base = `/api/settings/${channel.toLowerCase()}`;
  const ADMIN = access.roles('ADMIN');
  const Body = channel === 'EMAIL' ? EmailConfigBody : SmsConfigBody;
  const configOr404 = async (id: string) => {
    const row = await findConfig(db, channel, id);
    if (!row) throw notFound(`No ${channel.toLowerCase()} configuration ${id}.`);
    return row;
  };
  const checked = async (body: ConfigBody) => {
    const issues = transportIssues(channel, body);
    if (issues.length > 0) throw badRequest('VALIDATION_FAILED', 'The configuration is not valid for its transport.', issues);
    // SOAP/REST peers and SMTP relays alike are reached on a user's word: in production not a special-purpose address.
    if (body.transport === 'SMTP' && body.smtpHost && !isHostNameOrAddress(body.smtpHost)) {
      throw badRequest('VALIDATION_FAILED', 'The configuration is not valid for its transport.', [
        { path: 'body.smtpHost', message: 'must be a host name or an IP address, without a port' },
      ]);
    }
    const target = body.transport === 'SMTP' ? (body.smtpHost ? smtpRelayUrl(body.smtpHost, body.smtpPort) : null) : (body.serviceUrl ?? null);
    if (target) {
      try {
        await assertOutboundAllowed(target, outboundPolicyOf(config, body.transport === 'SMTP' ? 'smtp' : peerPurpose(body.transport), resolveHost));
      } catch (error) {
        throw badRequest('OUTBOUND_NOT_ALLOWED', (error as Error).message);
      }
    }
  };

  return [
    // Before `${base}/:id`, which would take `order` for an id.
    defineRoute({
      method: 'put',
      path: `${base}/order`,
      tag: 'settings',
      summary: `Make exactly these ${channel} configurations active, tried in this order; the others are deactivated`,
      access: ADMIN,
      body: OrderBody,
      responses: { 200: { description: 'the active configurations, in order', schema: Type.Object({ items: Type.Array(ConfigSchema) }) } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { body }) => {
        ctx.body = { items: (await orderActiveConfigs(db, channel, body.ids)).map(presentConfig) };
      },
    }),
    defineRoute({
      method: 'get',
      path: base,
      tag: 'settings',
      summary: `The ${channel} configurations, newest first (passwords never shown)`,
      access: ADMIN,
      query: Type.Object({ ...pageQueryFields }),
      responses: { 200: { description: 'a page of configurations', schema: pageSchema(ConfigSchema) } },
      errors: [],
      handler: async (ctx, { query }) => {
        ctx.body = presentPage(await listConfigs(db, channel, query), presentConfig);
      },
    }),
    defineRoute({
      method: 'post',
      path: base,
      tag: 'settings',
      summary: `Create a ${channel} configuration; isActive: true activates it and deactivates the others`,
      access: ADMIN,
      body: Body,
      responses: { 201: { description: 'the configuration', schema: ConfigSchema } },
      errors: ['CONFIG_NAME_TAKEN', 'OUTBOUND_NOT_ALLOWED'],
      handler: async (ctx, { body }) => {
        await checked(body as ConfigBody);
        const id = randomUUID();
        const columns = sealPasswords({ ...columnsOf(body as ConfigBody), is_active: false }, secretKeysOf(config), { channel, rowId: id });
        ctx.status = 201;
        ctx.body = presentConfig(await saveConfig(db, { channel, id, create: true, columns, activate: body.isActive }));
      },
    }),
    defineRoute({
      method: 'get',
      path: `${base}/:id`,
      tag: 'settings',
      summary: `One ${channel} configuration`,
      access: ADMIN,
      params: IdParams,
      responses: { 200: { description: 'the configuration', schema: ConfigSchema } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params }) => {
        ctx.body = presentConfig(await configOr404(params.id));
      },
    }),
    defineRoute({
      method: 'put',
      path: `${base}/:id`,
      tag: 'settings',
      summary: `Replace a ${channel} configuration; a password left out keeps the stored one`,
      access: ADMIN,
      params: IdParams,
      body: Body,
      responses: { 200: { description: 'the configuration', schema: ConfigSchema } },
      errors: ['NOT_FOUND', 'CONFIG_NAME_TAKEN', 'OUTBOUND_NOT_ALLOWED'],
      handler: async (ctx, { params, body }) => {
        const stored = await configOr404(params.id);
        await checked(body as ConfigBody);
        const replaced = columnsOf(body as ConfigBody);
        const moved = passwordDestinationChanges(stored, { ...stored, ...replaced }).filter((kind) =>
          kind === 'service'
            ? stored.service_password && replaced.service_password === undefined
            : stored.smtp_password && replaced.smtp_password === undefined,
        );
        if (moved.length > 0) {
          throw badRequest(
            'VALIDATION_FAILED',
            'The stored password goes only where it was given for: send it again with the new address or user name.',
            moved.map((kind) => ({
              path: kind === 'service' ? 'body.servicePassword' : 'body.smtpPassword',
              message: 'is required when the address or user name changes',
            })),
          );
        }
        const columns = sealPasswords(replaced, secretKeysOf(config), { channel, rowId: params.id });
        const saved = await saveConfig(db, { channel, id: params.id, create: false, columns, activate: body.isActive });
        const limitOf = (row: Pick<ChannelConfigRow, 'rate_per_second' | 'burst'>) => `${Number(row.rate_per_second ?? 0)}/${row.burst ?? ''}`;
        if (limitOf(stored) !== limitOf(saved)) await forgetPace(db, params.id);
        ctx.body = presentConfig(saved);
      },
    }),
    defineRoute({
      method: 'delete',
      path: `${base}/:id`,
      tag: 'settings',
      summary: `Delete a ${channel} configuration`,
      access: ADMIN,
      params: IdParams,
      responses: { 204: { description: 'deleted' } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params }) => {
        await configOr404(params.id);
        await deleteConfig(db, channel, params.id);
        ctx.status = 204;
      },
    }),
    defineRoute({
      method: 'post',
      path: `${base}/:id/activate`,
      tag: 'settings',
      summary: `Make this the only active ${channel} configuration`,
      access: ADMIN,
      params: IdParams,
      responses: { 200: { description: 'the configuration', schema: ConfigSchema } },
      errors: ['NOT_FOUND'],
      handler: async (ctx, { params }) => {
        await configOr404(params.id);
        ctx.body = presentConfig(await activateConfig(db, channel, params.id));
      },
    }),
  ];
}

/** Channel configurations of both channels, and the communication checks and one-off sends. */
export function communicationRoutes(deps: AppDeps): AnyRoute[] {
  const { db, config } = deps;
  const configFor = async (channel: Channel, configId?: string) => {
    const row = configId ? await findConfig(db, channel, configId) : await activeConfig(db, channel);
    if (!row)
      throw configId
        ? notFound(`No ${channel.toLowerCase()} configuration ${configId}.`)
        : conflict('NO_ACTIVE_CONFIG', `No ${channel.toLowerCase()} configuration is active.`);
    return row;
  };
  return [
    ...channelRoutes(deps, 'EMAIL'),
    ...channelRoutes(deps, 'SMS'),
    defineRoute({
      method: 'post',
      path: '/api/settings/communication/validate',
      tag: 'settings',
      summary: 'Check a configuration without sending: SMTP connects and authenticates; SOAP/REST render the sample request and parse it',
      access: access.roles('ADMIN'),
      body: ValidateBody,
      responses: { 200: { description: 'whether the configuration works, and why not', schema: ValidatedSchema } },
      errors: ['NOT_FOUND', 'NO_ACTIVE_CONFIG', 'SECRET_INTEGRITY_FAILED'],
      handler: async (ctx, { body }) => {
        const row = await configFor(body.channel, body.configId);
        const started = Date.now();
        let detail = 'ok';
        let ok = true;
        try {
          if (row.transport === 'SMTP') {
            const connectTo = await checkedAddress(smtpRelayUrl(row.smtp_host as string, row.smtp_port), outboundPolicyOf(config, 'smtp', deps.resolveHost));
            await verifySmtp(row, openPasswords(row, secretKeysOf(config), body.channel).smtpPassword, connectTo);
          } else {
            const problem = rendersWellFormed(row, renderPeerRequest(row, SAMPLE_VALUES).body);
            if (problem) throw new DeliveryFailure(`the rendered sample request is ${problem}`, true);
            await assertOutboundAllowed(row.service_url as string, outboundPolicyOf(config, peerPurpose(row.transport), deps.resolveHost));
          }
        } catch (error) {
          if (!(error instanceof DeliveryFailure)) throw error;
          ok = false;
          detail = error.message;
        }
        ctx.body = { ok, transport: row.transport, detail, latencyMs: Date.now() - started };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/settings/communication/process',
      tag: 'settings',
      summary: 'Send one message through the active configurations of a channel, in order, until one takes it',
      access: access.rolesOrInternal('ADMIN'),
      body: ProcessBody,
      responses: { 200: { description: 'whether the message was sent', schema: ProcessedSchema } },
      errors: ['NO_ACTIVE_CONFIG', 'SECRET_INTEGRITY_FAILED', 'OUTBOUND_NOT_ALLOWED'],
      idempotent: true,
      handler: async (ctx, { body }) => {
        const valid = body.channel === 'EMAIL' ? isEmailAddress(body.to) : isPhoneNumber(body.to);
        if (!valid)
          throw badRequest('VALIDATION_FAILED', 'The recipient is not valid.', [
            { path: 'body.to', message: body.channel === 'EMAIL' ? 'must be an email address' : 'must be an E.164 number' },
          ]);
        const rows = await activeConfigs(db, body.channel);
        if (rows.length === 0) throw conflict('NO_ACTIVE_CONFIG', `No ${body.channel.toLowerCase()} configuration is active.`);
        try {
          await sendThroughChannels({
            record: integrationLogOf(db),
            config,
            channels: rows.map((row) => ({ row, passwords: () => openPasswords(row, secretKeysOf(config), body.channel) })),
            message: { channel: body.channel, siteId: body.siteId, to: body.to, subject: body.subject ?? '', content: body.content },
            resolve: deps.resolveHost,
            // A caller waits on this answer: a configuration's rate limit holds it for a second at most.
            awaitTurn: awaitTurnOn(db),
          });
          ctx.body = { status: 'SUCCESS', detail: 'sent' };
        } catch (error) {
          // The guard refused the peer's address (at send time, as it resolves now): nothing was sent.
          if (error instanceof OutboundRefused) throw badRequest('OUTBOUND_NOT_ALLOWED', error.message);
          if (!(error instanceof DeliveryFailure)) throw error;
          ctx.body = { status: 'FAILED', detail: error.message };
        }
      },
    }),
  ];
}
