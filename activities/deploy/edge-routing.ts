import { log } from '@temporalio/activity';
import { edgeCanaryWeightOf, edgeHostsOf, edgeRoutesSlug, edgeRoutesToService, EdgeVersion } from '../../edge/admin';
import { finalFailure, retryableFailure } from '../failures';

/** How long a registry change may take to show at the edge before the run goes on without its confirmation. */
const EDGE_CONFIRM_MS = 15000;
// The deploy waits on this before its switch: each wait rounds up to the next look at Envoy's admin.
const POLL_MS = 20;

/**
 * Waits until the edge routes to every `routed` address of a service and to none of the `gone` ones, so
 * that "registered" means "routable": a redeploy drains the old instances only once the new ones take
 * requests, and a container stops only once no request can reach it (`emptied`: none of the service's, or no
 * route to its cluster: a cluster the registry dropped is still written, with its hosts, for a few seconds).
 * Without an edge (no admin URL, or an admin that does not answer) there is nothing to wait for. An edge
 * that still routes to instances being let go after the bound is logged, and the run goes on. One that
 * does not route to new instances fails the run (EDGE_NOT_ROUTING, final): it cannot reach them, so
 * switching to them would take the service down; the run's undo keeps the previous version serving.
 */
export async function untilEdgeRoutes(
  adminUrl: string | null,
  args: { serviceName: string; version?: EdgeVersion; routed?: string[]; gone?: string[]; emptied?: boolean; withinMs?: number },
): Promise<void> {
  if (!adminUrl) return;
  const routed = args.routed ?? [];
  const gone = args.gone ?? [];
  if (routed.length === 0 && gone.length === 0 && !args.emptied) return;
  const withinMs = args.withinMs ?? EDGE_CONFIRM_MS;
  const deadline = Date.now() + withinMs;
  for (;;) {
    const hosts = await edgeHostsOf(adminUrl, args.serviceName, args.version);
    if (hosts === null) {
      log.warn(`the edge's admin at ${adminUrl} does not answer; ${args.serviceName}'s routing change is not confirmed`);
      return;
    }
    const unrouted = routed.filter((address) => hosts.get(address) !== 'ROUTED');
    const emptied = async () => hosts.size === 0 || (await edgeRoutesToService(adminUrl, args.serviceName)) === false;
    if (unrouted.length === 0 && gone.every((address) => !hosts.has(address)) && (!args.emptied || (await emptied()))) return;
    if (Date.now() > deadline) {
      if (unrouted.length > 0) {
        throw finalFailure(
          'EDGE_NOT_ROUTING',
          `The edge does not route to ${unrouted.join(', ')} of ${args.serviceName} after ${withinMs / 1000} s: it cannot reach them, or their health check fails from where it runs.`,
        );
      }
      log.warn(`the edge still routes to instances of ${args.serviceName} being let go after ${withinMs} ms; they stop anyway`, {
        gone,
        edge: Object.fromEntries(hosts),
      });
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Waits until the edge no longer routes `/api/{slug}` (a service the registry forgot answers 404 from then
 * on, not 503). Without an edge there is nothing to wait for; one that still routes it after the bound is
 * logged and the run goes on: the control plane's next rewrite, within ten seconds, drops the route.
 */
export async function untilEdgeForgets(adminUrl: string | null, args: { serviceName: string; slug: string; withinMs?: number }): Promise<void> {
  if (!adminUrl) return;
  const withinMs = args.withinMs ?? EDGE_CONFIRM_MS;
  const deadline = Date.now() + withinMs;
  for (;;) {
    const routed = await edgeRoutesSlug(adminUrl, args.slug);
    if (routed === null) {
      log.warn(`the edge's admin at ${adminUrl} does not answer; the removal of ${args.serviceName}'s route is not confirmed`);
      return;
    }
    if (!routed) return;
    if (Date.now() > deadline) {
      log.warn(`the edge still routes /api/${args.slug} of ${args.serviceName} after ${withinMs} ms; the undeploy ends anyway`);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/**
 * Waits until the routes the edge runs give a service's canary `weight` percent of its requests, so a step
 * is judged on the share it was given, and a revert is over once it answers. Without an edge there is
 * nothing to wait for; an edge that has not taken the change within the bound fails this try (retried).
 */
export async function untilEdgeShares(adminUrl: string | null, args: { serviceName: string; weight: number; withinMs?: number }): Promise<void> {
  if (!adminUrl) return;
  const withinMs = args.withinMs ?? EDGE_CONFIRM_MS;
  const deadline = Date.now() + withinMs;
  for (;;) {
    const weight = await edgeCanaryWeightOf(adminUrl, args.serviceName);
    if (weight === null) {
      log.warn(`the edge's admin at ${adminUrl} does not answer; ${args.serviceName}'s canary share is not confirmed`);
      return;
    }
    if (weight === args.weight) return;
    if (Date.now() > deadline)
      throw retryableFailure(
        'EDGE_NOT_ROUTING',
        `The edge gives ${args.serviceName}'s canary ${weight}% of requests, not ${args.weight}%, after ${withinMs / 1000} s.`,
      );
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
