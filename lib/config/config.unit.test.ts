import { ConfigError, DEV_DEFAULTS, DEV_PAYLOAD_KEYS, loadConfig } from '.';

test('development defaults match the contract', () => {
  const config = loadConfig({ NODE_ENV: 'development' });
  expect(config).toEqual(
    expect.objectContaining({
      api: expect.objectContaining({ port: 8080, host: '127.0.0.1' }),
      databaseUrl: 'postgres://opsflow:opsflow@127.0.0.1:54329/opsflow',
      temporal: expect.objectContaining({ address: '127.0.0.1:7233', namespace: 'default', uiUrl: 'http://127.0.0.1:8233' }),
      identity: expect.objectContaining({ jwtSecret: 'opsflow-dev-secret' }),
      secrets: expect.objectContaining({ internalToken: 'opsflow-internal-dev-token' }),
      dataDir: '.data',
      deploy: expect.objectContaining({ network: 'opsflow' }),
      mail: expect.objectContaining({ smtpCapturePort: 1025 }),
      archive: expect.objectContaining({ cron: '0 2 * * *' }),
      production: false,
    }),
  );
});

test.each([
  ['API_PORT', 'eighty'],
  ['DATABASE_URL', 'mysql://x@y/z'],
  ['ARCHIVE_CRON', 'every day'],
  ['TEMPORAL_UI_URL', 'not a url'],
  ['SMTP_CAPTURE_PORT', '70000'],
  // A bare `*` would join every container on the engine to every service's network.
  ['DEPLOY_ATTACH_CONTAINERS', 'opsflow-edge,*'],
  ['DEPLOY_ATTACH_CONTAINERS', 'opsflow-*-worker'],
  ['DEPLOY_ATTACH_CONTAINERS', 'op*'],
  ['DEPLOY_DRIVER', 'kubernetes'],
  ['DEPLOY_REGISTRY', 'https://registry.example'],
  // A block narrower than one service's /26, an address that is no IPv4 one, and IPv6.
  ['DEPLOY_SUBNET_POOL', '10.213.0.0/27'],
  ['DEPLOY_SUBNET_POOL', '10.213.0.300/16'],
  ['DEPLOY_SUBNET_POOL', 'fd00::/64'],
  ['OTEL_EXPORTER_OTLP_ENDPOINT', 'collector:4318'],
  ['TRACE_SAMPLE_RATIO', '1.5'],
  ['TRACES_LINK', 'http://jaeger.example/search'],
])('an invalid %s stops start-up naming the variable', (variable, value) => {
  expect(() => loadConfig({ NODE_ENV: 'development', [variable]: value })).toThrow(ConfigError);
  expect(() => loadConfig({ NODE_ENV: 'development', [variable]: value })).toThrow(new RegExp(`^${variable}: `));
});

test('the swarm driver without a registry stops start-up: no node could pull a JAR image', () => {
  expect(() => loadConfig({ NODE_ENV: 'development', DEPLOY_DRIVER: 'swarm' })).toThrow(/^DEPLOY_REGISTRY: must be set when DEPLOY_DRIVER is swarm/);
  expect(loadConfig({ NODE_ENV: 'development', DEPLOY_DRIVER: 'swarm', DEPLOY_REGISTRY: '127.0.0.1:5000' })).toMatchObject({
    deploy: { driver: 'swarm', registry: '127.0.0.1:5000' },
  });
  expect(loadConfig({ NODE_ENV: 'development' })).toMatchObject({ deploy: { driver: 'docker', registry: null } });
});

test.each(Object.keys(DEV_DEFAULTS))('NODE_ENV=production refuses the development default of %s', (variable) => {
  const strong = { JWT_SECRET: 'a'.repeat(32), INTERNAL_TOKEN: 'b'.repeat(32), SECRETS_KEY: 'c'.repeat(32), TEMPORAL_PAYLOAD_KEYS: `k1:${'d'.repeat(32)}` };
  expect(() => loadConfig({ NODE_ENV: 'production', ...strong })).not.toThrow();
  const env = { NODE_ENV: 'production', ...strong, [variable]: DEV_DEFAULTS[variable as keyof typeof DEV_DEFAULTS] };
  expect(() => loadConfig(env)).toThrow(new RegExp(`^${variable}: the development default is refused`));
});

test("Temporal's payload keys: newest first, each id:secret; the development key is refused in production, even beside a real one", () => {
  expect(loadConfig({ NODE_ENV: 'development' }).temporal.payloadKeys).toEqual([{ id: 'dev1', secret: 'opsflow-dev-payload-key-change-me' }]);
  const strong = { JWT_SECRET: 'a'.repeat(32), INTERNAL_TOKEN: 'b'.repeat(32), SECRETS_KEY: 'c'.repeat(32) };
  expect(
    loadConfig({ NODE_ENV: 'production', ...strong, TEMPORAL_PAYLOAD_KEYS: `2026-11:${'n'.repeat(32)}, 2026-05:${'o'.repeat(20)}` }).temporal.payloadKeys,
  ).toEqual([
    { id: '2026-11', secret: 'n'.repeat(32) },
    { id: '2026-05', secret: 'o'.repeat(20) },
  ]);
  expect(() => loadConfig({ NODE_ENV: 'production', ...strong })).toThrow(/^TEMPORAL_PAYLOAD_KEYS: the development default is refused/);
  expect(() => loadConfig({ NODE_ENV: 'production', ...strong, TEMPORAL_PAYLOAD_KEYS: `k2:${'n'.repeat(32)},${DEV_PAYLOAD_KEYS}` })).toThrow(
    /^TEMPORAL_PAYLOAD_KEYS: the development default/,
  );
  for (const bad of ['nokey', ':secretsecretsecret', 'k1:short', `k 1:${'n'.repeat(20)}`, `k1:${'n'.repeat(20)},k1:${'m'.repeat(20)}`]) {
    expect(() => loadConfig({ NODE_ENV: 'development', TEMPORAL_PAYLOAD_KEYS: bad })).toThrow(/^TEMPORAL_PAYLOAD_KEYS: /);
  }
});

const strongSecrets = {
  JWT_SECRET: 'a'.repeat(32),
  INTERNAL_TOKEN: 'b'.repeat(32),
  SECRETS_KEY: 'c'.repeat(32),
  TEMPORAL_PAYLOAD_KEYS: `k1:${'d'.repeat(32)}`,
};

test.each([[undefined], [''], ['staging'], ['Development'], ['prod']])(
  'NODE_ENV=%p is production: the development secrets are refused and the outbound guard is on',
  (nodeEnv) => {
    expect(() => loadConfig({ NODE_ENV: nodeEnv })).toThrow(/^JWT_SECRET: the development default is refused/);
    expect(loadConfig({ NODE_ENV: nodeEnv, ...strongSecrets }).production).toBe(true);
  },
);

test.each(['development', 'test'])('NODE_ENV=%s applies the development rules', (nodeEnv) => {
  expect(loadConfig({ NODE_ENV: nodeEnv }).production).toBe(false);
});

test('the API listens on loopback unless API_HOST says otherwise', () => {
  expect(loadConfig({ NODE_ENV: 'development' }).api.host).toBe('127.0.0.1');
  expect(loadConfig({ ...strongSecrets }).api.host).toBe('127.0.0.1');
  expect(loadConfig({ NODE_ENV: 'development', API_HOST: '0.0.0.0' }).api.host).toBe('0.0.0.0');
});

test('JWT_JWKS_URL needs JWT_ISSUER and JWT_AUDIENCE, and https outside development', () => {
  const jwks = { ...strongSecrets, JWT_JWKS_URL: 'https://idp.example.test/jwks.json' };
  expect(() => loadConfig(jwks)).toThrow(/^JWT_ISSUER: is required with JWT_JWKS_URL/);
  expect(() => loadConfig({ ...jwks, JWT_ISSUER: 'https://idp.example.test/' })).toThrow(/^JWT_AUDIENCE: is required with JWT_JWKS_URL/);
  const complete = { ...jwks, JWT_ISSUER: 'https://idp.example.test/', JWT_AUDIENCE: 'opsflow' };
  expect(loadConfig(complete)).toEqual(
    expect.objectContaining({ identity: expect.objectContaining({ jwksUrl: jwks.JWT_JWKS_URL, issuer: 'https://idp.example.test/', audience: 'opsflow' }) }),
  );
  expect(() => loadConfig({ ...complete, JWT_JWKS_URL: 'http://idp.example.test/jwks.json' })).toThrow(/^JWT_JWKS_URL: must use https:/);
  expect(loadConfig({ ...complete, NODE_ENV: 'development', JWT_JWKS_URL: 'http://127.0.0.1:9/jwks.json' }).identity.jwksUrl).toBe(
    'http://127.0.0.1:9/jwks.json',
  );
});

test('the archive sink: the file sink unless ARCHIVE_SINK=s3, which names its store in full; nothing is guessed', () => {
  expect(loadConfig({ NODE_ENV: 'development' }).archive).toEqual(expect.objectContaining({ sink: 'file', s3: null }));
  // In production the store is reached over https only: its keys sign every request and the archives travel there.
  expect(() =>
    loadConfig({
      NODE_ENV: 'production',
      JWT_SECRET: 'a'.repeat(32),
      INTERNAL_TOKEN: 'b'.repeat(32),
      SECRETS_KEY: 'c'.repeat(32),
      TEMPORAL_PAYLOAD_KEYS: `k1:${'d'.repeat(32)}`,
      ARCHIVE_S3_ENDPOINT: 'http://s3.internal:8333',
      ARCHIVE_S3_BUCKET: 'opsflow-archive',
    }),
  ).toThrow(/^ARCHIVE_S3_ENDPOINT: /);
  const s3 = { NODE_ENV: 'development', ARCHIVE_SINK: 's3', ARCHIVE_S3_ENDPOINT: 'http://seaweedfs:8333', ARCHIVE_S3_BUCKET: 'opsflow-archive' };
  expect(loadConfig({ ...s3, ARCHIVE_S3_PREFIX: 'logs/opsflow/' }).archive.s3).toEqual({
    endpoint: 'http://seaweedfs:8333',
    bucket: 'opsflow-archive',
    prefix: 'logs/opsflow/',
    region: 'us-east-1',
    forcePathStyle: true,
  });
  for (const [variable, value] of [
    ['ARCHIVE_SINK', 'ftp'],
    ['ARCHIVE_S3_ENDPOINT', ''],
    ['ARCHIVE_S3_ENDPOINT', 'file:///tmp/archive'],
    ['ARCHIVE_S3_BUCKET', ''],
    ['ARCHIVE_S3_BUCKET', 'Opsflow_Archive'],
    ['ARCHIVE_S3_PREFIX', 'no-slash'],
    ['ARCHIVE_S3_PREFIX', '../up/'],
    ['ARCHIVE_S3_PATH_STYLE', 'yes'],
    ['ARCHIVE_S3_ENDPOINT', 'https://KEY:SECRET@s3.example.org'],
    ['ARCHIVE_S3_ENDPOINT', 'https://s3.example.org/?X-Amz-Credential=KEY'],
    ['ARCHIVE_S3_REGION', 'EU West'],
  ]) {
    expect(() => loadConfig({ ...s3, [variable]: value })).toThrow(new RegExp(`^${variable}: `));
  }
});

test('OUTBOUND_ALLOW takes every purpose it names, s3 among them (a purpose with a digit was refused)', () => {
  const config = loadConfig({ NODE_ENV: 'development', OUTBOUND_ALLOW: 's3:seaweedfs:8333,smtp:mailpit:1025' });
  expect(config.outboundAllow).toEqual([
    { purpose: 's3', host: 'seaweedfs', port: 8333 },
    { purpose: 'smtp', host: 'mailpit', port: 1025 },
  ]);
  expect(() => loadConfig({ NODE_ENV: 'development', OUTBOUND_ALLOW: 's4:seaweedfs:8333' })).toThrow(ConfigError);
});

test('tracing is off unless OTEL_EXPORTER_OTLP_ENDPOINT names a collector (or says off); every new trace is kept unless TRACE_SAMPLE_RATIO says', () => {
  const observability = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'development', ...env }).observability;
  expect(observability({}).tracing).toBeNull();
  expect(observability({ OTEL_EXPORTER_OTLP_ENDPOINT: 'off' }).tracing).toBeNull();
  expect(observability({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({ endpoint: 'http://collector:4318', sampleRatio: 1 });
  expect(observability({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector.example', TRACE_SAMPLE_RATIO: '0.1' }).tracing).toEqual({
    endpoint: 'https://collector.example',
    sampleRatio: 0.1,
  });
  const link = 'http://jaeger.example/search?service=opsflow-worker&tags={"temporalWorkflowId":"{workflowId}"}';
  expect(observability({ TRACES_LINK: link }).tracesLink).toBe(link);
});
