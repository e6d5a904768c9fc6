import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { PINNED_TEMPORAL_SERVER } from '../../scripts/temporal-server';
import { STAND_INS } from '../../scripts/images/stand-ins';

// docker-compose.yml cannot run on machines without a registry; these are the promises it must keep.
interface ComposeService {
  ports?: Array<string | { host_ip?: string; published?: string | number; target: number }>;
  network_mode?: string;
  volumes?: string[];
  environment?: Record<string, string>;
  healthcheck?: unknown;
  command?: string[];
  image?: string;
  networks?: string[] | Record<string, unknown>;
}

const compose = parse(fs.readFileSync(path.join(__dirname, '..', '..', 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
  networks: Record<string, { internal?: boolean } | null>;
};
const services = compose.services;
const mounts = (name: string) => services[name].volumes ?? [];
const SOCKET = '/var/run/docker.sock';

test('only deploy-worker can change Docker: it alone has the socket writable; the API reads through the read-only proxy', () => {
  const writable = Object.keys(services).filter((name) => mounts(name).some((volume) => volume.startsWith(SOCKET) && !volume.endsWith(':ro')));
  expect(writable).toEqual(['deploy-worker']);
  expect(services.api.environment?.DOCKER_HOST).toBe('tcp://docker-reader:2375');
  // Its own proxy, which lets through only the reads the API makes (the install drill probes it).
  expect(services['docker-reader'].image).toBe('opsflow/docker-reader:1.0');
  expect(fs.readFileSync(path.join(__dirname, '..', '..', 'scripts', 'images', 'docker-reader', 'haproxy.cfg'), 'utf8')).toMatch(
    /deny deny_status 403 unless METH_GET/,
  );
});

test('the API and the deploy worker share the data volume that carries uploaded JARs; the worker runs every other queue', () => {
  expect(mounts('api')).toContain('data:/data');
  expect(mounts('deploy-worker')).toContain('data:/data');
  expect(mounts('worker')).toContain('data:/data');
  expect(services.worker.command?.join(' ')).toContain('archival,messaging,approvals');
  expect(services['deploy-worker'].command?.join(' ')).toContain('--queues deployments');
});

test('the stateful services and the API have health checks', () => {
  for (const name of ['postgres', 'temporal', 'mailpit', 'api']) expect(services[name].healthcheck).toBeDefined();
});

/**
 * Where a published port listens on the host: `127.0.0.1:8025:8025` -> 127.0.0.1; `8080:8080` -> every
 * interface. A variable with its default (`${EDGE_PORT:-8080}`) stands for one port number.
 */
function hostAddresses(service: ComposeService): string[] {
  return (service.ports ?? []).map((port) => {
    if (typeof port === 'object') return port.host_ip ?? '0.0.0.0';
    const parts = String(port)
      .replace(/\$\{[^}]*\}/g, '0')
      .split(':');
    return parts.length === 3 ? parts[0] : '0.0.0.0';
  });
}

test('only the edge is published beyond this host: the API behind it, Temporal, its Web UI, Mailpit, Jaeger, PostgreSQL and the Docker proxy are not, or on 127.0.0.1', () => {
  const everywhere = Object.keys(services).filter((name) => hostAddresses(services[name]).some((address) => address !== '127.0.0.1'));
  expect(everywhere).toEqual(['edge']);
  for (const name of ['api', 'temporal', 'postgres', 'docker-reader']) expect(services[name].ports ?? []).toEqual([]);
  expect(hostAddresses(services['temporal-ui'])).toEqual(['127.0.0.1']);
  expect(hostAddresses(services.mailpit)).toEqual(['127.0.0.1']);
  expect(hostAddresses(services.jaeger)).toEqual(['127.0.0.1']);
  expect(Object.keys(services).filter((name) => services[name].network_mode === 'host')).toEqual([]);
});

test('#64: HTTPS is published by docker-compose.https.yml alone, so that an upgrade on the main file keeps the edge container', () => {
  expect(services.edge.ports).toEqual(['${EDGE_PORT:-8080}:8080']);
  const https = parse(fs.readFileSync(path.join(__dirname, '..', '..', 'docker-compose.https.yml'), 'utf8')) as { services: Record<string, ComposeService> };
  expect(Object.keys(https.services)).toEqual(['edge']);
  expect(https.services.edge.ports).toEqual(['${EDGE_TLS_PORT:-443}:8443']);
  // Envoy's HTTPS listener in its container, and the port clients see, where plain HTTP redirects them.
  expect(services.api.environment).toEqual(expect.objectContaining({ EDGE_TLS_PORT: 8443, EDGE_TLS_PUBLIC_PORT: '${EDGE_TLS_PORT:-443}' }));
});

test('the Temporal Web UI runs with write actions disabled: no signal, update, cancel, terminate or reset from it', () => {
  expect(services['temporal-ui'].environment?.TEMPORAL_DISABLE_WRITE_ACTIONS).toBe('true');
});

test('each deployed service gets a network of its own, which only the gateway (the edge) and the deploy worker replicas join', () => {
  const attach = String(services['deploy-worker'].environment?.DEPLOY_ATTACH_CONTAINERS ?? '').split(',');
  const named = (service: string) => (compose.services[service] as ComposeService & { container_name?: string }).container_name;
  // Compose names replicas {project}-{service}-{n}: the prefix joins each of them, and only them.
  expect(attach).toEqual([named('edge'), `${(compose as { name?: string }).name}-deploy-worker-*`]);
  // No shared network for deployed services to meet each other on.
  expect(Object.values(services).flatMap((service) => (service as { networks?: string[] }).networks ?? [])).not.toContain('opsflow');
});

test('the edge is the official Envoy image on the files the API writes; its admin listens only on a network the API and the deploy worker share with it', () => {
  const edge = services.edge as ComposeService & {
    image?: string;
    entrypoint?: string[];
    networks?: Record<string, { ipv4_address?: string; gw_priority?: number }>;
  };
  expect(edge.image).toBe('envoyproxy/envoy:v1.40.0');
  expect(mounts('edge')).toEqual(['edge:/edge:ro']);
  expect(mounts('api')).toContain('edge:/edge');
  expect(services.api.environment?.EDGE_DIR).toBe('/edge');
  // The admin address the API writes into Envoy's bootstrap is the edge's address on the internal network.
  const adminUrl = new URL(String((compose as unknown as { 'x-opsflow-env': Record<string, string> })['x-opsflow-env'].EDGE_ADMIN_URL));
  expect(edge.networks?.['edge-admin']?.ipv4_address).toBe(adminUrl.hostname);
  const onAdminNetwork = Object.keys(services).filter((name) => {
    const networks = (services[name] as { networks?: string[] | Record<string, unknown> }).networks ?? [];
    return (Array.isArray(networks) ? networks : Object.keys(networks)).includes('edge-admin');
  });
  expect(onAdminNetwork.sort()).toEqual(['api', 'deploy-worker', 'edge']);
  expect((compose as unknown as { networks: Record<string, { internal?: boolean }> }).networks['edge-admin'].internal).toBe(true);
  // Its published port stays on the default network when the deploy worker joins it to a service's network
  // (the install drill saw connections refused for two seconds when it moved): the engine keeps the gateway on
  // the network whose name sorts first, so the default network's name sorts before DEPLOY_NETWORK-{service}.
  const defaultNetwork = (compose as unknown as { networks: Record<string, { name?: string }> }).networks.default.name;
  const deployNetwork = (compose as unknown as { 'x-opsflow-env': Record<string, string> })['x-opsflow-env'].DEPLOY_NETWORK;
  expect([defaultNetwork, `${deployNetwork}-0`, `${deployNetwork}-a`].sort()[0]).toBe(defaultNetwork);
  expect(defaultNetwork).toBe(deployNetwork);
  // Not root, though its entrypoint skips the image's own drop: the owner of the API's files, read-only.
  expect((edge as { user?: string }).user).toBe('1000:1000');
  // Containers on the admin network take addresses away from the edge's fixed one.
  const adminIpam = (compose as unknown as { networks: Record<string, { ipam: { config: Array<{ subnet: string; ip_range: string }> } }> }).networks[
    'edge-admin'
  ].ipam.config[0];
  expect({ subnet: adminIpam.subnet, range: adminIpam.ip_range, edge: adminUrl.hostname }).toEqual({
    subnet: '10.255.255.0/27',
    range: '10.255.255.16/28',
    edge: '10.255.255.2',
  });
});

test('two replicas of each worker, the deploy worker included (no fixed container name, so it can scale)', () => {
  for (const worker of ['worker', 'deploy-worker']) {
    const service = compose.services[worker] as ComposeService & { deploy?: { replicas?: number }; container_name?: string };
    expect({ worker, replicas: service.deploy?.replicas, containerName: service.container_name }).toEqual({ worker, replicas: 2, containerName: undefined });
  }
});

test("every Opsflow process seals Temporal's payloads with keys it must be given; the Web UI opens them through the API's codec endpoint", () => {
  for (const name of ['api', 'worker', 'deploy-worker'])
    expect(services[name].environment?.TEMPORAL_PAYLOAD_KEYS).toBe('${TEMPORAL_PAYLOAD_KEYS:?set TEMPORAL_PAYLOAD_KEYS}');
  expect(services['temporal-ui'].environment).toEqual(
    expect.objectContaining({ TEMPORAL_CODEC_ENDPOINT: expect.stringMatching(/\/api\/temporal\/codec$/), TEMPORAL_CODEC_PASS_ACCESS_TOKEN: 'true' }),
  );
});

const networksOf = (name: string) => {
  const networks = services[name].networks;
  if (!networks) return services[name].network_mode ? [] : ['default'];
  return Array.isArray(networks) ? networks : Object.keys(networks);
};

test("the Docker proxy, which shows every container's environment, shares an internal network with the API alone", () => {
  expect(networksOf('docker-reader')).toEqual(['docker-proxy']);
  expect(compose.networks['docker-proxy']?.internal).toBe(true);
  expect(
    Object.keys(services)
      .filter((name) => networksOf(name).includes('docker-proxy'))
      .sort(),
  ).toEqual(['api', 'docker-reader']);
});

/** The images an engine pulls: those the file does not build from this repository. */
const pulledImages = () => {
  const built = new Set(Object.values(services).flatMap((service) => ((service as { build?: unknown }).build ? [service.image] : [])));
  return Object.entries(services)
    .filter(([, service]) => service.image && !built.has(service.image))
    .map(([name, service]) => ({ name, image: service.image! }));
};

test("PostgreSQL takes as many connections as npm start's: two Temporal nodes and the platform's pools pass the default 100", () => {
  expect(services.postgres.command).toEqual(['postgres', '-c', 'max_connections=300']);
  expect(fs.readFileSync(path.join(__dirname, '..', '..', 'scripts', 'platform', 'postgres.ts'), 'utf8')).toContain("'max_connections=300'");
});

test('every pulled image is pinned to a version: no latest, no bare major; the platform runs one image of its own, tagged by release', () => {
  const images = pulledImages();
  expect(images.length).toBeGreaterThan(4);
  for (const { name, image } of images) expect({ name, image, pinned: /:v?\d+\.\d+(\.\d+)?$/.test(image) }).toEqual({ name, image, pinned: true });
  for (const name of ['api', 'migrate', 'temporal-setup', 'worker', 'deploy-worker'])
    expect(services[name].image).toBe('opsflow/opsflow:${OPSFLOW_VERSION:-dev}');
});

test('every image the file pulls, and every FROM of the images it builds, has a stand-in that scripts/images.ts builds here', () => {
  const standIns = STAND_INS.map((standIn) => standIn.image);
  for (const { image } of pulledImages()) expect({ image, standIn: standIns.includes(image) }).toEqual({ image, standIn: true });
  for (const dockerfile of ['Dockerfile', 'temporal-config/image/Dockerfile', 'scripts/images/docker-reader/Dockerfile']) {
    const froms = [...fs.readFileSync(path.join(__dirname, '..', '..', dockerfile), 'utf8').matchAll(/^FROM (\S+)/gm)].map((match) => match[1]);
    for (const image of froms) expect({ dockerfile, image, standIn: standIns.includes(image) }).toEqual({ dockerfile, image, standIn: true });
  }
  expect(standIns).toContain(services['deploy-worker'].environment?.DEPLOY_BASE_IMAGE?.replace(/^\$\{DEPLOY_BASE_IMAGE:-(.*)\}$/, '$1'));
});

test('Temporal is two nodes of the pinned server behind a door, set up by a schema job, on a network of their own; no auto-setup', () => {
  const images = Object.values(services).map((service) => service.image ?? '');
  expect(images.filter((image) => image.includes('auto-setup'))).toEqual([]);
  // The release `npm start` and the cluster tests build and run.
  for (const name of ['temporal-schema', 'temporal-1', 'temporal-2'])
    expect(services[name].image).toBe(`opsflow/temporal-server:${PINNED_TEMPORAL_SERVER}-opsflow1`);
  expect(fs.readFileSync(path.join(__dirname, '..', '..', 'temporal-config', 'image', 'Dockerfile'), 'utf8')).toContain(
    `TEMPORAL_SERVER_VERSION=${PINNED_TEMPORAL_SERVER}`,
  );
  expect(services.temporal.image).toBe('envoyproxy/envoy:v1.40.0');
  for (const name of ['temporal-1', 'temporal-2', 'temporal-schema']) expect(networksOf(name)).toEqual(['temporal-nodes']);
  expect(compose.networks['temporal-nodes']?.internal).toBe(true);
  // Besides the nodes and their schema job, only PostgreSQL and the door reach the nodes' network.
  expect(
    Object.keys(services)
      .filter((name) => networksOf(name).includes('temporal-nodes'))
      .sort(),
  ).toEqual(['postgres', 'temporal', 'temporal-1', 'temporal-2', 'temporal-schema']);
  for (const name of ['api', 'worker', 'deploy-worker']) expect(services[name].environment?.TEMPORAL_ADDRESS).toBe('temporal:7233');
});

test("Temporal takes only the platform's tokens in compose: the nodes run the authorizer and the platform's claim mapper on its two JWKS; every platform process has the identity it signs with; a setup job registers the namespace with an administrator's token", () => {
  const template = fs.readFileSync(path.join(__dirname, '..', '..', 'temporal-config', 'server.yaml'), 'utf8');
  const authorization = /authorization:\n([\s\S]*?)\n\n/.exec(template)?.[1] ?? '';
  expect(authorization).toMatch(/authorizer: default/);
  // Our own server's mapper (temporal-config/server), which refuses to start under any other name: it reads
  // each class of keys from the node's environment, so the template lists none for the default mapper.
  expect(authorization).toMatch(/claimMapper: opsflow/);
  expect(authorization).not.toMatch(/keySourceURIs/);
  const server = path.join(__dirname, '..', '..', 'temporal-config', 'server');
  expect(fs.readFileSync(path.join(server, 'main.go'), 'utf8')).toMatch(/claimMapper, err := newOpsflowClaimMapper\(&cfg\.Global\.Authorization, logger\)/);
  expect(fs.readFileSync(path.join(server, 'claim_mapper.go'), 'utf8')).toMatch(/opsflowClaimMapperName = "opsflow"/);
  for (const name of ['temporal-1', 'temporal-2'])
    expect(services[name].environment).toEqual(
      expect.objectContaining({
        TEMPORAL_JWKS_URI: 'file:///temporal-public/jwks.json',
        TEMPORAL_ADMIN_JWKS_URI: 'file:///temporal-public/admin-jwks.json',
        // The workload key writes the platform's namespace alone.
        TEMPORAL_WORKLOAD_NAMESPACES: services.api.environment?.TEMPORAL_NAMESPACE,
        TEMPORAL_OPERATOR_JWKS_URI: '${TEMPORAL_OPERATOR_JWKS_URI:-}',
        TEMPORAL_OPERATOR_ISSUER: '${TEMPORAL_OPERATOR_ISSUER:-}',
      }),
    );
  for (const name of ['api', 'worker', 'deploy-worker', 'migrate']) {
    expect(services[name].environment?.TEMPORAL_IDENTITY_DIR).toBe('/identity');
    expect(mounts(name)).toContain('temporal-identity:/identity');
  }
  for (const name of ['migrate', 'temporal-setup']) {
    expect(services[name].environment?.TEMPORAL_ADMIN_IDENTITY_DIR).toBe('/temporal-admin');
    expect(mounts(name)).toContain('temporal-admin:/temporal-admin');
  }
  expect(services['temporal-setup'].command?.join(' ')).toBe('node dist/scripts/temporal-setup.js');
  for (const name of ['api', 'worker', 'deploy-worker'])
    expect((services[name] as { depends_on?: Record<string, { condition: string }> }).depends_on?.['temporal-setup']).toEqual({
      condition: 'service_completed_successfully',
    });
  // The image makes every mount point the migrate job writes, owned by the user it runs as.
  expect(fs.readFileSync(path.join(__dirname, '..', '..', 'Dockerfile'), 'utf8')).toMatch(
    /mkdir -p [^\n]*\/identity \/temporal-admin \/temporal-tls \/temporal-public && chown node:node/,
  );
});

test("Temporal speaks TLS in compose: the nodes serve and authenticate each other with the tls volume's certificate, which only they and the migrate job mount; every client verifies it with the public copy; no one but the platform's processes mounts the signing key", () => {
  const template = fs.readFileSync(path.join(__dirname, '..', '..', 'temporal-config', 'server.yaml'), 'utf8');
  expect(template).toMatch(/internode:\s*\n\s*server:[\s\S]*?requireClientAuth: true/);
  expect(template).toMatch(/frontend:\s*\n\s*server:[\s\S]*?certFile/);
  for (const name of ['temporal-1', 'temporal-2']) {
    expect(services[name].environment?.TEMPORAL_TLS_DIR).toBe('/temporal-tls/certs');
    expect(mounts(name).sort()).toEqual(['temporal-public:/temporal-public:ro', 'temporal-tls:/temporal-tls:ro']);
  }
  expect(
    Object.keys(services)
      .filter((name) => mounts(name).some((volume) => volume.startsWith('temporal-tls:')))
      .sort(),
  ).toEqual(['migrate', 'temporal-1', 'temporal-2']);
  expect(
    Object.keys(services)
      .filter((name) => mounts(name).some((volume) => volume.startsWith('temporal-identity:')))
      .sort(),
  ).toEqual(['api', 'deploy-worker', 'migrate', 'worker']);
  for (const name of ['api', 'worker', 'deploy-worker']) expect(services[name].environment?.TEMPORAL_TLS_CA_FILE).toBe('/temporal-public/ca.pem');
  expect(services['temporal-ui'].environment).toEqual(
    expect.objectContaining({
      TEMPORAL_TLS_CA: '/temporal-public/ca.pem',
      TEMPORAL_TLS_SERVER_NAME: 'temporal',
      TEMPORAL_TLS_ENABLE_HOST_VERIFICATION: 'true',
    }),
  );
  expect(mounts('temporal-ui')).toEqual(['temporal-public:/temporal-public:ro']);
  expect(services.migrate.environment).toEqual(expect.objectContaining({ TEMPORAL_TLS_DIR: '/temporal-tls/certs', TEMPORAL_PUBLIC_DIR: '/temporal-public' }));
});

test("#58, finding 6: the administrator's key is on a volume only the migrate job (which makes it) and the setup job (which signs with it) mount: never the API, the workers, the nodes or the UI", () => {
  const holders = Object.keys(services)
    .filter((name) => mounts(name).some((volume) => volume.startsWith('temporal-admin:')))
    .sort();
  expect(holders).toEqual(['migrate', 'temporal-setup']);
  for (const name of ['api', 'worker', 'deploy-worker']) {
    expect({ name, mounts: mounts(name).filter((volume) => /admin/.test(volume)) }).toEqual({ name, mounts: [] });
    expect({ name, adminDir: services[name].environment?.TEMPORAL_ADMIN_IDENTITY_DIR }).toEqual({ name, adminDir: undefined });
  }
  // The setup job holds the administrator's key and not the workload key; the nodes read only its public half.
  expect(mounts('temporal-setup').some((volume) => volume.startsWith('temporal-identity:'))).toBe(false);
  expect((compose as { volumes?: Record<string, unknown> }).volumes).toHaveProperty('temporal-admin');
});
