import { NativeConnection } from '@temporalio/worker';
import { Config } from '../lib/config';
import { clientTlsOf } from '../temporal-config/server-certificates';

/**
 * The pollers' connection to Temporal: on the configured address, verified TLS where the server has it, and
 * the client's service token where the server requires one (the caller renews it).
 */
export function connectPollers(config: Pick<Config, 'temporal'>, token: (() => string) | null): Promise<NativeConnection> {
  return NativeConnection.connect({
    address: config.temporal.address,
    ...(token ? { apiKey: token() } : {}),
    tls: clientTlsOf(config.temporal.tlsCaFile) ?? false,
  });
}
