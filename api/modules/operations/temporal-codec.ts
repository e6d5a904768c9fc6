import net from 'node:net';
import os from 'node:os';
import { Type } from '@sinclair/typebox';
import { Payload } from '@temporalio/common';
import { Context, Middleware } from 'koa';
import { forbidden, PlatformError } from '../../../lib/errors';
import { CODEC_ENDPOINT_PATH, PayloadKeyUnknown, PayloadTampered, payloadCodecOf } from '../../../temporal-config/payload-codec';
import { AppDeps } from '../../deps';
import { access, AnyRoute, defineRoute } from '../../http/route';

/**
 * The codec endpoint of the Temporal Web UI and CLI (`--codec-endpoint`): they send the payloads of a history
 * as they got them and show what comes back. Payloads are sealed with the platform's keys
 * (temporal-config/payload-codec.ts), so this is the one place outside the workers that opens them:
 * in production to ADMIN tokens alone (the UI forwards the user's token), in development to callers on this
 * machine alone, the dev server's UI among them.
 */
export const TEMPORAL_CODEC_PREFIX = CODEC_ENDPOINT_PATH;

// The JSON form of Temporal's Payload message, as the UI and the CLI send it: bytes in base64.
const JsonPayload = Type.Object({
  metadata: Type.Optional(Type.Record(Type.String({ maxLength: 256 }), Type.String({ maxLength: 1024 }))),
  data: Type.Optional(Type.String()),
});
const Payloads = Type.Object({ payloads: Type.Array(JsonPayload, { maxItems: 10_000 }) });
type JsonPayloadShape = { metadata?: Record<string, string>; data?: string };

const fromJson = (payload: JsonPayloadShape): Payload => ({
  metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')])),
  data: Buffer.from(payload.data ?? '', 'base64'),
});
const toJson = (payload: Payload): JsonPayloadShape => ({
  metadata: Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value ?? []).toString('base64')])),
  data: Buffer.from(payload.data ?? []).toString('base64'),
});

const plainAddress = (address: string) => (address.startsWith('::ffff:') ? address.slice(7) : address);
const isLoopback = (address: string | undefined) => {
  if (!address) return false;
  const plain = plainAddress(address);
  return plain === '::1' || (net.isIPv4(plain) && plain.startsWith('127.'));
};
const isThisHost = (address: string) =>
  isLoopback(address) || Object.values(os.networkInterfaces()).some((entries) => entries?.some((entry) => entry.address === plainAddress(address)));

/**
 * On this machine: the connection comes from loopback, every client the edge forwarded for is this host (on
 * the platform's routes Envoy appends to X-Forwarded-For, and names a loopback client by the host's own
 * address; any address from elsewhere in the list refuses), the Host is a name of this machine or the
 * platform's own (a page whose name was rebound to 127.0.0.1 sends its own), and a browser's Origin, if
 * any, is the Web UI's.
 */
function fromThisMachine(ctx: Context, names: { uiOrigins: string[]; publicHost: string }): boolean {
  const forwarded = [ctx.get('x-forwarded-for'), ctx.get('x-real-ip')]
    .flatMap((header) => header.split(','))
    .map((entry) => entry.trim())
    .filter(Boolean);
  const host = ctx.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const origin = ctx.get('origin');
  return (
    isLoopback(ctx.req.socket.remoteAddress) &&
    forwarded.every(isThisHost) &&
    (host === 'localhost' || host === names.publicHost || isLoopback(host)) &&
    (origin === '' || names.uiOrigins.includes(origin))
  );
}

/** The Web UI's origin as configured, and its other loopback spelling (127.0.0.1 and localhost are one machine). */
function uiOriginsOf(temporalUiUrl: string): string[] {
  const ui = new URL(temporalUiUrl);
  const origins = [ui.origin];
  const other = ui.hostname === 'localhost' ? '127.0.0.1' : ui.hostname === '127.0.0.1' ? 'localhost' : null;
  if (other) origins.push(`${ui.protocol}//${other}${ui.port ? `:${ui.port}` : ''}`);
  return origins;
}

export function temporalCodecRoutes(deps: AppDeps): AnyRoute[] {
  const codec = payloadCodecOf(deps.config);
  const { production } = deps.config;
  const names = { uiOrigins: uiOriginsOf(deps.config.temporal.uiUrl), publicHost: new URL(deps.config.api.publicUrl).hostname.toLowerCase() };
  const route = (direction: 'decode' | 'encode', summary: string) =>
    defineRoute({
      method: 'post',
      path: `${TEMPORAL_CODEC_PREFIX}/${direction}`,
      tag: 'operations',
      summary,
      access: production ? access.roles('ADMIN') : access.public,
      body: Payloads,
      bodyLimitBytes: 16 * 1024 * 1024,
      responses: { 200: { description: `the payloads, ${direction}d`, schema: Payloads } },
      errors: ['FORBIDDEN'],
      async handler(ctx, { body }) {
        if (!production && !fromThisMachine(ctx, names)) throw forbidden('In development the codec endpoint answers callers on this machine only.');
        try {
          const payloads = await codec[direction](body.payloads.map(fromJson));
          ctx.body = { payloads: payloads.map(toJson) };
        } catch (error) {
          if (error instanceof PayloadKeyUnknown || error instanceof PayloadTampered) throw new PlatformError('VALIDATION_FAILED', error.message);
          throw error;
        }
      },
    });
  return [
    route('decode', "Opens the platform's sealed Temporal payloads (the Web UI's and the CLI's codec endpoint)"),
    route('encode', 'Seals payloads as the platform does (the Web UI sends what it starts or signals through it)'),
  ];
}

/**
 * The Web UI calls the codec endpoint from the browser, at its own origin, with an X-Namespace header: a
 * cross-origin request with a preflight. Only the UI's origin (TEMPORAL_UI_URL, either loopback spelling)
 * is answered with CORS headers; any other page's script gets no readable answer.
 */
export function temporalCodecCors(deps: AppDeps): Middleware {
  const uiOrigins = uiOriginsOf(deps.config.temporal.uiUrl);
  return async (ctx, next) => {
    const uiOrigin = ctx.get('origin');
    if (!ctx.path.startsWith(`${TEMPORAL_CODEC_PREFIX}/`) || !uiOrigins.includes(uiOrigin)) {
      await next();
      return;
    }
    ctx.set('Access-Control-Allow-Origin', uiOrigin);
    ctx.set('Access-Control-Allow-Credentials', 'true');
    ctx.vary('Origin');
    if (ctx.method !== 'OPTIONS') {
      await next();
      return;
    }
    ctx.set('Access-Control-Allow-Methods', 'POST');
    ctx.set('Access-Control-Allow-Headers', 'authorization, content-type, x-namespace');
    ctx.set('Access-Control-Max-Age', '600');
    ctx.status = 204;
  };
}
