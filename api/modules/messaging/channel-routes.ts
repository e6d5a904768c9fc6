import { TSchema, Type } from '@sinclair/typebox';
import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute, RouteInput } from '../../http/route';
import { conflict, notFound } from '../../../lib/errors';
import { activateConfig, activeConfig, Channel, deleteConfig, findConfig, listConfigs, orderActiveConfigs } from '../../../data/messaging/channel-configs';
import { pageQueryFields, pageSchema, presentPage } from '../../http/pagination';
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
} from './channel-schemas';
import { presentConfig } from './present-channel-config';
import { createConfig, processMessage, replaceConfig, validateConfig } from './channel-commands';

/** The body a channel's configurations are written with: an email's may name SMTP, an SMS's may not. */
interface ChannelBody<B extends TSchema> {
  channel: Channel;
  schema: B;
  /** The body as the commands take it. Each channel's body fits, so this is the identity, checked by the compiler. */
  asConfig: (body: RouteInput<B, undefined, undefined>['body']) => ConfigBody;
}
const EMAIL_BODY: ChannelBody<typeof EmailConfigBody> = { channel: 'EMAIL', schema: EmailConfigBody, asConfig: (body) => body };
const SMS_BODY: ChannelBody<typeof SmsConfigBody> = { channel: 'SMS', schema: SmsConfigBody, asConfig: (body) => body };

/** What every route of one channel's configurations shares. */
function channelPlace(deps: AppDeps, channel: Channel) {
  const configOr404 = async (id: string) => {
    const row = await findConfig(deps.db, channel, id);
    if (!row) throw notFound(`No ${channel.toLowerCase()} configuration ${id}.`);
    return row;
  };
  return { deps, db: deps.db, channel, base: `/api/settings/${channel.toLowerCase()}`, ADMIN: access.roles('ADMIN'), configOr404 };
}
type ChannelPlace = ReturnType<typeof channelPlace>;

/** Which configurations are active: `order` makes several active, tried in order; `activate` makes one the only one. */
function activationRoutes({ db, channel, base, ADMIN, configOr404 }: ChannelPlace): AnyRoute[] {
  return [
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

/** The configurations themselves: listed, read, created, replaced and deleted. */
function configRoutes<B extends TSchema>({ deps, db, channel, base, ADMIN, configOr404 }: ChannelPlace, { schema, asConfig }: ChannelBody<B>): AnyRoute[] {
  return [
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
      body: schema,
      responses: { 201: { description: 'the configuration', schema: ConfigSchema } },
      errors: ['CONFIG_NAME_TAKEN', 'OUTBOUND_NOT_ALLOWED'],
      handler: async (ctx, { body }) => {
        ctx.status = 201;
        ctx.body = presentConfig(await createConfig(deps, channel, asConfig(body)));
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
      body: schema,
      responses: { 200: { description: 'the configuration', schema: ConfigSchema } },
      errors: ['NOT_FOUND', 'CONFIG_NAME_TAKEN', 'OUTBOUND_NOT_ALLOWED'],
      handler: async (ctx, { params, body }) => {
        const stored = await configOr404(params.id);
        ctx.body = presentConfig(await replaceConfig(deps, channel, stored, asConfig(body)));
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
  ];
}

/**
 * `/api/settings/email` or `/api/settings/sms`: the channel's configurations. `activate` makes one the only
 * active configuration (as the first wave had it); `order` makes several active, tried in order.
 */
function channelRoutes<B extends TSchema>(deps: AppDeps, body: ChannelBody<B>): AnyRoute[] {
  const place = channelPlace(deps, body.channel);
  // The order route before `${base}/:id`, which would take `order` for an id.
  return [...activationRoutes(place), ...configRoutes(place, body)];
}

/** Channel configurations of both channels, and the communication checks and one-off sends. */
export function communicationRoutes(deps: AppDeps): AnyRoute[] {
  const { db } = deps;
  const configFor = async (channel: Channel, configId?: string) => {
    const row = configId ? await findConfig(db, channel, configId) : await activeConfig(db, channel);
    if (!row)
      throw configId
        ? notFound(`No ${channel.toLowerCase()} configuration ${configId}.`)
        : conflict('NO_ACTIVE_CONFIG', `No ${channel.toLowerCase()} configuration is active.`);
    return row;
  };
  return [
    ...channelRoutes(deps, EMAIL_BODY),
    ...channelRoutes(deps, SMS_BODY),
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
        ctx.body = await validateConfig(deps, body.channel, await configFor(body.channel, body.configId));
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
        ctx.body = await processMessage(deps, body);
      },
    }),
  ];
}
