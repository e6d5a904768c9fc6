import { edgeClusters } from './envoy-config';
import { type EdgePlan } from './xds';

const plan = (apiHost: string): EdgePlan => ({
  dir: '/edge',
  listen: { host: '0.0.0.0', port: 8080 },
  api: { host: apiHost, port: 8081 },
  reservedSlugs: [],
  services: [],
  jwt: { secret: 'a-secret-of-sixteen', jwks: null } as unknown as EdgePlan['jwt'],
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
