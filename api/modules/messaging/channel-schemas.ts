import { Static, Type } from '@sinclair/typebox';
import { Instant, Nullable, SiteId } from '../../http/common-schemas';

// The schemas of the channel routes: what a request may hold, and what an answer holds.

const Text = (maxLength: number) => Type.String({ maxLength });
const OptionalNullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Optional(Nullable(schema));

const channelFields = {
  configName: Type.String({ minLength: 1, maxLength: 200 }),
  isActive: Type.Optional(Type.Boolean()),
  serviceUrl: OptionalNullable(Text(2048)),
  sampleRequest: OptionalNullable(Text(1_000_000)),
  serviceUsername: OptionalNullable(Text(200)),
  servicePassword: OptionalNullable(Text(1000)),
  soapMethodName: OptionalNullable(Text(200)),
  restMethodType: Type.Optional(Type.Union([Type.Literal('POST'), Type.Literal('PUT'), Type.Literal('PATCH'), Type.Literal('GET'), Type.Null()])),
  ratePerSecond: Type.Optional(
    Nullable(Type.Number({ minimum: 0.1, maximum: 10000, description: 'messages a second through this configuration, across every worker (null: no limit)' })),
  ),
  burst: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 10000, description: 'messages that may go at once (null: one second of the rate)' }))),
};

export const EmailConfigBody = Type.Object(
  {
    ...channelFields,
    transport: Type.Union([Type.Literal('SMTP'), Type.Literal('SOAP'), Type.Literal('REST')]),
    smtpHost: OptionalNullable(Text(255)),
    smtpPort: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 65535 }), Type.Null()])),
    smtpUsername: OptionalNullable(Text(200)),
    smtpPassword: OptionalNullable(Text(1000)),
    smtpUseSsl: Type.Optional(Type.Boolean()),
    smtpUseTls: Type.Optional(Type.Boolean()),
    smtpAllowPlain: Type.Optional(Type.Boolean({ description: 'send without TLS even where the server offers STARTTLS (default false)' })),
  },
  { additionalProperties: false },
);
export const SmsConfigBody = Type.Object(
  { ...channelFields, transport: Type.Union([Type.Literal('SOAP'), Type.Literal('REST')]) },
  { additionalProperties: false },
);
export type ConfigBody = Static<typeof EmailConfigBody>;

export const IdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
export const OrderBody = Type.Object(
  { ids: Type.Array(Type.String({ format: 'uuid' }), { maxItems: 20, uniqueItems: true, description: 'the active configurations, first tried first' }) },
  { additionalProperties: false },
);
const ChannelName = Type.Union([Type.Literal('EMAIL'), Type.Literal('SMS')]);
export const ValidateBody = Type.Object({ channel: ChannelName, configId: Type.Optional(Type.String({ format: 'uuid' })) }, { additionalProperties: false });
export const ProcessBody = Type.Object(
  { channel: ChannelName, siteId: SiteId, to: Type.String({ minLength: 1, maxLength: 254 }), subject: Type.Optional(Text(998)), content: Text(1_000_000) },
  { additionalProperties: false },
);

export const ConfigSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  configName: Type.String(),
  transport: Type.Union([Type.Literal('SMTP'), Type.Literal('SOAP'), Type.Literal('REST')]),
  isActive: Type.Boolean(),
  priority: Type.Integer({ description: 'among the active configurations, the lowest is tried first' }),
  // Email configurations only:
  smtpHost: Type.Optional(Nullable(Type.String())),
  smtpPort: Type.Optional(Nullable(Type.Integer())),
  smtpUsername: Type.Optional(Nullable(Type.String())),
  hasSmtpPassword: Type.Optional(Type.Boolean()),
  smtpUseSsl: Type.Optional(Nullable(Type.Boolean())),
  smtpUseTls: Type.Optional(Nullable(Type.Boolean())),
  smtpAllowPlain: Type.Optional(Type.Boolean()),
  serviceUrl: OptionalNullable(Type.String()),
  sampleRequest: OptionalNullable(Type.String()),
  serviceUsername: OptionalNullable(Type.String()),
  hasServicePassword: Type.Boolean(),
  soapMethodName: OptionalNullable(Type.String()),
  restMethodType: Nullable(Type.String()),
  ratePerSecond: Nullable(Type.Number()),
  burst: Nullable(Type.Integer()),
  createdAt: Instant,
  updatedAt: Instant,
});
export const ValidatedSchema = Type.Object({ ok: Type.Boolean(), transport: Type.String(), detail: Type.String(), latencyMs: Type.Integer() });
export const ProcessedSchema = Type.Object({ status: Type.Union([Type.Literal('SUCCESS'), Type.Literal('FAILED')]), detail: Type.String() });

export const SAMPLE_VALUES = {
  emailto: 'someone@example.test',
  emailsubject: 'Sample subject',
  emailcontent: '<p>Sample</p>',
  phoneto: '+15550000000',
  messagecontent: 'Sample',
};
