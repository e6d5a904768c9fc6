import { log } from '@temporalio/activity';
import { edgeHostsOf } from '../../data/deploy/edge/edge-admin';

/** How long a registry change may take to show at the edge before the run goes on without its confirmation. */
const EDGE_CONFIRM_MS = 15000;
const POLL_MS = 100;

/**
 * Waits until the edge routes to every `routed` address of a service and to none of the `gone` ones, so
 * that "registered" means "routable": a redeploy drains the old instances only once the new ones take
 * requests, and a container stops only once no request can reach it (`emptied`: none of the service's). Without an edge (no admin URL, or
 * an admin that does not answer) there is nothing to wait for; an edge that does not follow within the
 * bound is logged, and the run goes on, as it would have without one.
 */
export async function untilEdgeRoutes(adminUrl: string | null, args: { serviceName: string; routed?: string[]; gone?: string[]; emptied?: boolean }): Promise<void> {
  if (!adminUrl) return;
  const routed = args.routed ?? [];
  const gone = args.gone ?? [];
  if (routed.length === 0 && gone.length === 0 && !args.emptied) return;
  const deadline = Date.now() + EDGE_CONFIRM_MS;
  for (;;) {
    const hosts = await edgeHostsOf(adminUrl, args.serviceName);
    if (hosts === null) {
      log.warn(`the edge's admin at ${adminUrl} does not answer; ${args.serviceName}'s routing change is not confirmed`);
      return;
    }
    if (routed.every((address) => hosts.get(address) === 'ROUTED') && gone.every((address) => !hosts.has(address)) && (!args.emptied || hosts.size === 0)) return;
    if (Date.now() > deadline) {
      log.warn(`the edge did not follow ${args.serviceName}'s routing change within ${EDGE_CONFIRM_MS} ms`, { routed, gone, edge: Object.fromEntries(hosts) });
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
