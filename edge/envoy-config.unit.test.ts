import { edgeClusters, edgeListeners } from './envoy-config';
import { edgeRoutes } from './routes';
import { type EdgePlan } from './xds';

const plan = (apiHost: string): EdgePlan => ({
  dir: '/edge',
  listen: { host: '0.0.0.0', port: 8080 },
  api: { host: apiHost, port: 8081 },
  reservedSlugs: [],
  services: [],
  jwt: { hs256Secret: 'a-secret-of-sixteen' },
  connectTimeoutMs: 1000,
  idleTimeoutMs: 60000,
});

const apiCluster = (apiHost: string) =>
  (edgeClusters(plan(apiHost)).resources as Array<{ name: string; type: string }>).find((cluster) => cluster.name === 'opsflow_api');

test('the API cluster takes an address as it is, and looks a name up (compose names the API opsflow-api: Envoy refused the name as an address)', () => {
  expect(apiCluster('127.0.0.1')?.type).toBe('STATIC');
  expect(apiCluster('::1')?.type).toBe('STATIC');
  expect(apiCluster('opsflow-api')).toEqual(expect.objectContaining({ type: 'STRICT_DNS', dns_lookup_family: 'V4_ONLY' }));
  // Never looked up under the host's search domains: an outside `opsflow-api.<domain>` would get the requests.
  expect(JSON.stringify(apiCluster('opsflow-api'))).toContain('"no_default_search_domain":true');
});

const connectionManagerOf = (edgePlan: EdgePlan) =>
  (edgeListeners(edgePlan).resources[0] as { filter_chains: Array<{ filters: Array<{ typed_config: Record<string, unknown> }> }> }).filter_chains[0].filters[0]
    .typed_config;

test("with tracing, the edge makes spans at the share asked and sends them to the collector's cluster; without, neither", () => {
  const traced = { ...plan('127.0.0.1'), tracing: { endpoint: 'http://127.0.0.1:4318', sampleRatio: 0.25 } };
  expect(connectionManagerOf(traced).tracing).toEqual(
    expect.objectContaining({
      random_sampling: { value: 25 },
      provider: expect.objectContaining({ name: 'envoy.tracers.opentelemetry' }),
    }),
  );
  expect(JSON.stringify(connectionManagerOf(traced).tracing)).toContain('"uri":"http://127.0.0.1:4318/v1/traces"');
  expect((edgeClusters(traced).resources as Array<{ name: string }>).map((cluster) => cluster.name)).toContain('opentelemetry_collector');
  expect(connectionManagerOf(plan('127.0.0.1')).tracing).toBeUndefined();
  expect((edgeClusters(plan('127.0.0.1')).resources as Array<{ name: string }>).map((cluster) => cluster.name)).not.toContain('opentelemetry_collector');
});

test("an unsubscribe link's route keeps no span: its path is its token", () => {
  const traced = { ...plan('127.0.0.1'), tracing: { endpoint: 'http://127.0.0.1:4318', sampleRatio: 1 } };
  const routes = (edgeRoutes(traced).http.resources[0] as { virtual_hosts: Array<{ routes: Array<Record<string, any>> }> }).virtual_hosts.at(-1)!.routes;
  const unsubscribe = routes.filter((route) => route.match.prefix === '/u/');
  expect(unsubscribe.length).toBeGreaterThan(0);
  for (const route of unsubscribe) {
    expect(route.match.case_sensitive).toBe(false);
    expect(route.tracing).toEqual({ overall_sampling: { numerator: 0, denominator: 'HUNDRED' } });
  }
  // Before the API's catch-all, which would take it first.
  expect(routes.findIndex((route) => route.match.prefix === '/u/')).toBeLessThan(routes.findIndex((route) => route.match.prefix === '/'));
});
