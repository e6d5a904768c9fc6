import { platformWithApi } from '../support/platform';
import { call, expectProblem } from '../support/http';

/**
 * A service's hostnames (#64): set and read through the API, against PostgreSQL. The edge's routing by
 * hostname is tested with a real Envoy in test/deploy/edge.test.ts.
 */
const thisFile = platformWithApi({ env: { PUBLIC_URL: 'https://ops.example.test' } });
let admin: string;
let editor: string;

const newService = async (name: string) =>
  thisFile.platform
    .db('infra.service')
    .insert({ name, slug: name, kind: 'IMAGE', dynamic: true, status: 'RUNNING', image: 'nginx:1', port: 80 })
    .onConflict('name')
    .ignore();
const domainsOf = (name: string, token = admin) => call(thisFile.api.url, 'GET', `/api/infra/services/${name}/domains`, { token });
const setDomains = (name: string, domains: unknown, token = admin) =>
  call(thisFile.api.url, 'PUT', `/api/infra/services/${name}/domains`, { token, body: { domains } });

beforeAll(async () => {
  admin = await thisFile.platform.token({ sub: 'ada', roles: ['ADMIN'] });
  editor = await thisFile.platform.token({ sub: 'eda', roles: ['EDITOR'], sites: ['site-a'] });
  await newService('shop-one');
  await newService('shop-two');
});

test("an ADMIN sets a service's hostnames (kept lower case, once each, without the trailing dot); each waits for its certificate", async () => {
  const set = await setDomains('shop-one', ['Shop.Example.test.', 'www.shop.example.test', 'shop.example.test']);
  expect(set.status).toBe(200);
  const expected = {
    service: 'shop-one',
    domains: [
      { hostname: 'shop.example.test', state: 'PENDING', source: 'ACME', notAfter: null, problem: null },
      { hostname: 'www.shop.example.test', state: 'PENDING', source: 'ACME', notAfter: null, problem: null },
    ],
  };
  expect(set.body).toEqual(expected);
  expect((await domainsOf('shop-one')).body).toEqual(expected);
  // The whole list each time: a name left out is let go.
  expect((await setDomains('shop-one', ['shop.example.test'])).body.domains.map((domain: { hostname: string }) => domain.hostname)).toEqual([
    'shop.example.test',
  ]);
});

test('a name let go takes its certificate row with it, whoever deletes it: a next owner starts afresh', async () => {
  await setDomains('shop-one', ['keep.example.test', 'gone.example.test']);
  const certificates = () => thisFile.platform.db('infra.certificate').whereIn('hostname', ['keep.example.test', 'gone.example.test']).orderBy('hostname');
  expect((await certificates()).map((row: { hostname: string; state: string }) => [row.hostname, row.state])).toEqual([
    ['gone.example.test', 'PENDING'],
    ['keep.example.test', 'PENDING'],
  ]);
  await setDomains('shop-one', ['keep.example.test']);
  expect((await certificates()).map((row: { hostname: string }) => row.hostname)).toEqual(['keep.example.test']);
  // A writer who skips the API (an undeploy's cascade is one) takes it too: the table's trigger.
  await thisFile.platform.db('infra.service_domain').where({ hostname: 'keep.example.test' }).delete();
  expect(await certificates()).toEqual([]);
});

test("a hostname another service holds is 409 DOMAIN_TAKEN and changes nothing, as is the platform's own", async () => {
  await setDomains('shop-one', ['shop.example.test']);
  await setDomains('shop-two', ['two.example.test']);
  expectProblem(await setDomains('shop-two', ['two.example.test', 'SHOP.example.test']), 409, 'DOMAIN_TAKEN');
  // PUBLIC_URL's host is the platform's own.
  expectProblem(await setDomains('shop-two', ['new.example.test', 'OPS.example.test']), 409, 'DOMAIN_TAKEN');
  expect((await domainsOf('shop-two')).body.domains.map((domain: { hostname: string }) => domain.hostname)).toEqual(['two.example.test']);
  // The database holds the line for a writer who skips the API: the hostname is the table's key.
  await expect(
    thisFile.platform
      .db('infra.service_domain')
      .insert({ hostname: 'shop.example.test', service_id: (await thisFile.platform.db('infra.service').where({ name: 'shop-two' }).first()).id }),
  ).rejects.toThrow(/duplicate key/);
});

test('a malformed hostname is 400 DOMAIN_INVALID naming it, and changes nothing; so are other bodies off the contract', async () => {
  await setDomains('shop-two', ['two.example.test']);
  for (const bad of [
    '*.example.test',
    'no_underscore.example.test',
    'single',
    '10.0.0.1',
    'shop.example.test:8443',
    `${'a'.repeat(64)}.example.test`,
    'bücher.example.test',
  ]) {
    const refused = await setDomains('shop-two', [bad]);
    expectProblem(refused, 400, 'DOMAIN_INVALID');
    expect(JSON.stringify(refused.body.errors)).toContain(bad.toLowerCase());
  }
  expectProblem(await setDomains('shop-two', 'two.example.test'), 400, 'VALIDATION_FAILED');
  expectProblem(
    await setDomains(
      'shop-two',
      Array.from({ length: 21 }, (_, i) => `s${i}.example.test`),
    ),
    400,
    'VALIDATION_FAILED',
  );
  expect((await domainsOf('shop-two')).body.domains.map((domain: { hostname: string }) => domain.hostname)).toEqual(['two.example.test']);
  // And a writer who skips the API: the table checks the shape too.
  const id = (await thisFile.platform.db('infra.service').where({ name: 'shop-two' }).first()).id;
  await expect(thisFile.platform.db('infra.service_domain').insert({ hostname: 'Bad_Name', service_id: id })).rejects.toThrow(/check constraint/);
});

test('only an ADMIN reads or sets them; an unknown service is 404, a core module 409', async () => {
  expectProblem(await setDomains('shop-two', ['x.example.test'], editor), 403, 'FORBIDDEN');
  expectProblem(await domainsOf('shop-two', editor), 403, 'FORBIDDEN');
  expectProblem(await domainsOf('no-such-service'), 404, 'SERVICE_NOT_FOUND');
  const core = await thisFile.platform.db('infra.service').where({ dynamic: false }).first();
  if (core) expectProblem(await setDomains(core.name, ['core.example.test']), 409, 'SERVICE_NOT_DYNAMIC');
});

test("a deploy may carry hostnames: they are the new service's own; one another service holds refuses the whole deploy, which registers nothing", async () => {
  await setDomains('shop-one', ['shop.example.test']);
  const deploy = (name: string, domains: string[]) =>
    call(thisFile.api.url, 'POST', '/api/infra/deploy', { token: admin, body: { name, image: 'nginx:1', port: 80, domains } });
  expectProblem(await deploy('shop-three', ['three.example.test', 'shop.example.test']), 409, 'DOMAIN_TAKEN');
  expectProblem(await deploy('shop-three', ['three_bad.example.test']), 400, 'DOMAIN_INVALID');
  expect(await thisFile.platform.db('infra.service').where({ name: 'shop-three' })).toEqual([]);
  expect(await thisFile.platform.db('infra.service_domain').where({ hostname: 'three.example.test' })).toEqual([]);

  const accepted = await deploy('shop-three', ['Three.example.test']);
  expect(accepted.status).toBe(202);
  expect((await domainsOf('shop-three')).body.domains).toEqual([
    { hostname: 'three.example.test', state: 'PENDING', source: 'ACME', notAfter: null, problem: null },
  ]);
});
