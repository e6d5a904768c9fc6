import { pollUntil } from '../../poll-until';
import { DeployDeps } from '../deps';

/** Serial numbers as Envoy's admin and Node print them differ in case and leading zeros. */
const sameSerial = (a: string, b: string) => a.toLowerCase().replace(/^0+/, '') === b.toLowerCase().replace(/^0+/, '');

/** The serial numbers of every certificate Envoy serves now, from its admin's `/certs`. */
async function servedSerials(adminUrl: string): Promise<string[]> {
  const answer = await fetch(`${adminUrl}/certs`, { signal: AbortSignal.timeout(5000) });
  if (!answer.ok) throw new Error(`the edge's admin answered ${answer.status} for /certs`);
  const body = (await answer.json()) as { certificates?: Array<{ cert_chain?: Array<{ serial_number?: string }> }> };
  return (body.certificates ?? []).flatMap((entry) => (entry.cert_chain ?? []).map((cert) => cert.serial_number ?? ''));
}

/** Whether the edge's active HTTPS listener (not one still warming) has a filter chain for `hostname`. */
async function activeChainFor(adminUrl: string, hostname: string): Promise<boolean> {
  const answer = await fetch(`${adminUrl}/config_dump?resource=dynamic_listeners`, { signal: AbortSignal.timeout(5000) });
  if (!answer.ok) throw new Error(`the edge's admin answered ${answer.status} for /config_dump`);
  type Chain = { filter_chain_match?: { server_names?: string[] } };
  type Listener = { name?: string; active_state?: { listener?: { filter_chains?: Chain[] } }; warming_state?: unknown };
  const body = (await answer.json()) as { configs?: Listener[] };
  return (body.configs ?? []).some(
    (listener) =>
      !listener.warming_state &&
      (listener.active_state?.listener?.filter_chains ?? []).some((chain) => chain.filter_chain_match?.server_names?.includes(hostname)),
  );
}

/**
 * Waits until the edge serves the certificate: Envoy holds it (the control plane writes it into the HTTPS
 * listener's chain for the hostname on word of the database's change) and that listener is active (not
 * warming), so a handshake now gets it.
 * Without an edge admin to ask (EDGE_ADMIN_URL), there is nothing to wait for.
 */
export function confirmCertificateAtEdge({ config }: DeployDeps) {
  return async (input: { hostname: string; serial: string }): Promise<void> => {
    if (!config.edge.adminUrl) return;
    const adminUrl = config.edge.adminUrl;
    await pollUntil(500, async () => {
      const held = (await servedSerials(adminUrl)).some((serial) => sameSerial(serial, input.serial));
      return held && (await activeChainFor(adminUrl, input.hostname)) ? true : undefined;
    });
  };
}
