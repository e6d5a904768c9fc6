import { log } from '@temporalio/activity';
import { edgeCanaryWeightOf, edgeHostsOf, edgeRequestsInFlight, edgeRoutesSlug, edgeRoutesToService, EdgeVersion } from '../../edge/admin';
import { finalFailure, retryableFailure } from '../failures';
import { askUntil, pauseMs } from '../../lib/poll-until';

/** How long a registry change may take to show at the edge before the run goes on without its confirmation. */
const EDGE_CONFIRM_MS = 15000;
// The deploy waits on these before its switch: each wait rounds up to the next look at Envoy's admin, which
// answers on the thread that also applies its configuration. Quick looks first, then a slower pace.
const POLL_MS = 20;
const QUICK_LOOKS_MS = 1000;
const SLOW_POLL_MS = 100;

/**
 * Looks at the edge (every 20 ms for a second, then every 100 ms) until what it `sees` is `settled`. An admin that does not answer (no edge
 * running) is logged as `unconfirmed` and not waited for; past the bound, `late` has the last look (it logs,
 * and the run goes on, or it throws).
 */
async function untilEdge<Seen>(
  adminUrl: string,
  args: {
    withinMs?: number;
    sees: () => Promise<Seen | null>;
    settled: (seen: Seen) => boolean | Promise<boolean>;
    unconfirmed: string;
    late: (seen: Seen, withinMs: number) => void;
  },
): Promise<void> {
  const withinMs = args.withinMs ?? EDGE_CONFIRM_MS;
  const started = Date.now();
  const deadline = started + withinMs;
  // A plain pause, not an activity's: a test asks the edge through these outside any activity.
  await askUntil(
    async () => {
      const seen = await args.sees();
      if (seen === null) {
        log.warn(`the edge's admin at ${adminUrl} does not answer; ${args.unconfirmed}`);
        return true;
      }
      if (await args.settled(seen)) return true;
      if (Date.now() > deadline) {
        args.late(seen, withinMs);
        return true;
      }
      return undefined;
    },
    pauseMs(() => (Date.now() - started < QUICK_LOOKS_MS ? POLL_MS : SLOW_POLL_MS)),
  );
}

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
  const unroutedOf = (hosts: Map<string, string>) => routed.filter((address) => hosts.get(address) !== 'ROUTED');
  await untilEdge(adminUrl, {
    withinMs: args.withinMs,
    sees: () => edgeHostsOf(adminUrl, args.serviceName, args.version),
    settled: async (hosts) =>
      unroutedOf(hosts).length === 0 &&
      gone.every((address) => !hosts.has(address)) &&
      (!args.emptied || hosts.size === 0 || (await edgeRoutesToService(adminUrl, args.serviceName)) === false),
    unconfirmed: `${args.serviceName}'s routing change is not confirmed`,
    late: (hosts, withinMs) => {
      const unrouted = unroutedOf(hosts);
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
    },
  });
}

/**
 * Waits until the requests the edge has in flight to a service it let go have ended, for at most `withinMs`
 * (the drain time): a container stopped while it still answers would cut them. Past the bound it is logged,
 * and the containers stop anyway.
 */
export async function untilEdgeDrained(adminUrl: string | null, args: { serviceName: string; withinMs: number }): Promise<void> {
  if (!adminUrl) return;
  await untilEdge(adminUrl, {
    withinMs: args.withinMs,
    sees: () => edgeRequestsInFlight(adminUrl, args.serviceName),
    settled: (inFlight) => inFlight === 0,
    unconfirmed: `${args.serviceName}'s requests in flight are not known`,
    late: (inFlight, withinMs) => {
      log.warn(`${inFlight} request(s) to ${args.serviceName} still in flight after ${withinMs} ms of drain; its containers stop anyway`);
    },
  });
}

/**
 * Waits until the edge no longer routes `/api/{slug}` (a service the registry forgot answers 404 from then
 * on, not 503). Without an edge there is nothing to wait for; one that still routes it after the bound is
 * logged and the run goes on: the control plane's next rewrite, within ten seconds, drops the route.
 */
export async function untilEdgeForgets(adminUrl: string | null, args: { serviceName: string; slug: string; withinMs?: number }): Promise<void> {
  if (!adminUrl) return;
  await untilEdge(adminUrl, {
    withinMs: args.withinMs,
    sees: () => edgeRoutesSlug(adminUrl, args.slug),
    settled: (routed) => !routed,
    unconfirmed: `the removal of ${args.serviceName}'s route is not confirmed`,
    late: (_, withinMs) => {
      log.warn(`the edge still routes /api/${args.slug} of ${args.serviceName} after ${withinMs} ms; the undeploy ends anyway`);
    },
  });
}

/**
 * Waits until the routes the edge runs give a service's canary `weight` percent of its requests, so a step
 * is judged on the share it was given, and a revert is over once it answers. Without an edge there is
 * nothing to wait for; an edge that has not taken the change within the bound fails this try (retried).
 */
export async function untilEdgeShares(adminUrl: string | null, args: { serviceName: string; weight: number; withinMs?: number }): Promise<void> {
  if (!adminUrl) return;
  await untilEdge(adminUrl, {
    withinMs: args.withinMs,
    sees: () => edgeCanaryWeightOf(adminUrl, args.serviceName),
    settled: (weight) => weight === args.weight,
    unconfirmed: `${args.serviceName}'s canary share is not confirmed`,
    late: (weight, withinMs) => {
      throw retryableFailure(
        'EDGE_NOT_ROUTING',
        `The edge gives ${args.serviceName}'s canary ${weight}% of requests, not ${args.weight}%, after ${withinMs / 1000} s.`,
      );
    },
  });
}
