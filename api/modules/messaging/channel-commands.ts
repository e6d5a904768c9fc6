import { randomUUID } from 'node:crypto';
import { AppDeps } from '../../deps';
import { badRequest, conflict } from '../../../lib/errors';
import { passwordDestinationChanges } from '../../../domain/messaging';
import { isEmailAddress, isPhoneNumber } from '../../../domain/recipients';
import { activeConfigs, Channel, ChannelConfigRow, openPasswords, saveConfig, sealPasswords } from '../../../data/messaging/channel-configs';
import { integrationLogOf } from '../../../data/messaging/integration-log';
import { awaitTurnOn, forgetPace } from '../../../data/messaging/channel-pace';
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
import { ConfigBody, SAMPLE_VALUES } from './channel-schemas';
import { columnsOf, transportIssues } from './channel-config-body';

// What the channel routes do: each a command the route calls once it has parsed and authorised.

type Deps = Pick<AppDeps, 'db' | 'config' | 'resolveHost'>;

/** A configuration's body as its transport needs it, reaching only an address the outbound policy allows. */
async function checkConfig({ config, resolveHost }: Deps, channel: Channel, body: ConfigBody): Promise<void> {
  const issues = transportIssues(channel, body);
  if (issues.length > 0) throw badRequest('VALIDATION_FAILED', 'The configuration is not valid for its transport.', issues);
  // SOAP/REST peers and SMTP relays alike are reached on a user's word: in production not a special-purpose address.
  if (body.transport === 'SMTP' && body.smtpHost && !isHostNameOrAddress(body.smtpHost)) {
    throw badRequest('VALIDATION_FAILED', 'The configuration is not valid for its transport.', [
      { path: 'body.smtpHost', message: 'must be a host name or an IP address, without a port' },
    ]);
  }
  const target = body.transport === 'SMTP' ? (body.smtpHost ? smtpRelayUrl(body.smtpHost, body.smtpPort) : null) : (body.serviceUrl ?? null);
  if (!target) return;
  try {
    await assertOutboundAllowed(target, outboundPolicyOf(config, body.transport === 'SMTP' ? 'smtp' : peerPurpose(body.transport), resolveHost));
  } catch (error) {
    throw badRequest('OUTBOUND_NOT_ALLOWED', (error as Error).message);
  }
}

/** A new configuration, its passwords sealed; `isActive` activates it and deactivates the others. */
export async function createConfig(deps: Deps, channel: Channel, body: ConfigBody): Promise<ChannelConfigRow> {
  await checkConfig(deps, channel, body);
  const id = randomUUID();
  const columns = sealPasswords({ ...columnsOf(body), is_active: false }, secretKeysOf(deps.config), { channel, rowId: id });
  return saveConfig(deps.db, { channel, id, create: true, columns, activate: body.isActive });
}

/**
 * A stored password goes only where it was given for: a new address or user name needs it sent again.
 * A changed rate limit starts its pace afresh.
 */
export async function replaceConfig(deps: Deps, channel: Channel, stored: ChannelConfigRow, body: ConfigBody): Promise<ChannelConfigRow> {
  await checkConfig(deps, channel, body);
  const replaced = columnsOf(body);
  const moved = passwordDestinationChanges(stored, { ...stored, ...replaced }).filter((kind) =>
    kind === 'service' ? stored.service_password && replaced.service_password === undefined : stored.smtp_password && replaced.smtp_password === undefined,
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
  const columns = sealPasswords(replaced, secretKeysOf(deps.config), { channel, rowId: stored.id });
  const saved = await saveConfig(deps.db, { channel, id: stored.id, create: false, columns, activate: body.isActive });
  const limitOf = (row: Pick<ChannelConfigRow, 'rate_per_second' | 'burst'>) => `${Number(row.rate_per_second ?? 0)}/${row.burst ?? ''}`;
  if (limitOf(stored) !== limitOf(saved)) await forgetPace(deps.db, stored.id);
  return saved;
}

/** Checks a configuration without sending: SMTP connects and authenticates; SOAP/REST render the sample request. */
export async function validateConfig(deps: Deps, channel: Channel, row: ChannelConfigRow) {
  const { config, resolveHost } = deps;
  const started = Date.now();
  try {
    if (row.transport === 'SMTP') {
      const connectTo = await checkedAddress(smtpRelayUrl(row.smtp_host as string, row.smtp_port), outboundPolicyOf(config, 'smtp', resolveHost));
      await verifySmtp(row, openPasswords(row, secretKeysOf(config), channel).smtpPassword, connectTo);
    } else {
      const problem = rendersWellFormed(row, renderPeerRequest(row, SAMPLE_VALUES).body);
      if (problem) throw new DeliveryFailure(`the rendered sample request is ${problem}`, true);
      await assertOutboundAllowed(row.service_url as string, outboundPolicyOf(config, peerPurpose(row.transport), resolveHost));
    }
    return { ok: true, transport: row.transport, detail: 'ok', latencyMs: Date.now() - started };
  } catch (error) {
    if (!(error instanceof DeliveryFailure)) throw error;
    return { ok: false, transport: row.transport, detail: error.message, latencyMs: Date.now() - started };
  }
}

/** Sends one message through the channel's active configurations, in order, until one takes it. */
export async function processMessage(
  deps: Deps,
  message: { channel: Channel; siteId: string; to: string; subject?: string; content: string },
): Promise<{ status: 'SUCCESS' | 'FAILED'; detail: string }> {
  const { db, config } = deps;
  const valid = message.channel === 'EMAIL' ? isEmailAddress(message.to) : isPhoneNumber(message.to);
  if (!valid)
    throw badRequest('VALIDATION_FAILED', 'The recipient is not valid.', [
      { path: 'body.to', message: message.channel === 'EMAIL' ? 'must be an email address' : 'must be an E.164 number' },
    ]);
  const rows = await activeConfigs(db, message.channel);
  if (rows.length === 0) throw conflict('NO_ACTIVE_CONFIG', `No ${message.channel.toLowerCase()} configuration is active.`);
  try {
    await sendThroughChannels({
      record: integrationLogOf(db),
      config,
      channels: rows.map((row) => ({ row, passwords: () => openPasswords(row, secretKeysOf(config), message.channel) })),
      message: { channel: message.channel, siteId: message.siteId, to: message.to, subject: message.subject ?? '', content: message.content },
      resolve: deps.resolveHost,
      // A caller waits on this answer: a configuration's rate limit holds it for a second at most.
      awaitTurn: awaitTurnOn(db),
    });
    return { status: 'SUCCESS', detail: 'sent' };
  } catch (error) {
    // The guard refused the peer's address (at send time, as it resolves now): nothing was sent.
    if (error instanceof OutboundRefused) throw badRequest('OUTBOUND_NOT_ALLOWED', error.message);
    if (!(error instanceof DeliveryFailure)) throw error;
    return { status: 'FAILED', detail: error.message };
  }
}
