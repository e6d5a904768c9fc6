import { ConfigError, DEV_DEFAULTS, loadConfig } from './config';

test('development defaults match the contract', () => {
  const config = loadConfig({});
  expect(config).toEqual(
    expect.objectContaining({
      apiPort: 8080,
      databaseUrl: 'postgres://opsflow:opsflow@127.0.0.1:54329/opsflow',
      temporalAddress: '127.0.0.1:7233',
      temporalNamespace: 'default',
      temporalUiUrl: 'http://127.0.0.1:8233',
      jwtSecret: 'opsflow-dev-secret',
      internalToken: 'opsflow-internal-dev-token',
      dataDir: '.data',
      deployNetwork: 'opsflow',
      smtpCapturePort: 1025,
      archiveCron: '0 2 * * *',
    }),
  );
});

test.each([
  ['API_PORT', 'eighty'],
  ['DATABASE_URL', 'mysql://x@y/z'],
  ['ARCHIVE_CRON', 'every day'],
  ['TEMPORAL_UI_URL', 'not a url'],
  ['SMTP_CAPTURE_PORT', '70000'],
])('an invalid %s stops start-up naming the variable', (variable, value) => {
  expect(() => loadConfig({ [variable]: value })).toThrow(ConfigError);
  expect(() => loadConfig({ [variable]: value })).toThrow(new RegExp(`^${variable}: `));
});

test.each(Object.keys(DEV_DEFAULTS))('NODE_ENV=production refuses the development default of %s', (variable) => {
  const strong = { JWT_SECRET: 'a'.repeat(32), INTERNAL_TOKEN: 'b'.repeat(32), SECRETS_KEY: 'c'.repeat(32) };
  expect(() => loadConfig({ NODE_ENV: 'production', ...strong })).not.toThrow();
  const env = { NODE_ENV: 'production', ...strong, [variable]: DEV_DEFAULTS[variable as keyof typeof DEV_DEFAULTS] };
  expect(() => loadConfig(env)).toThrow(new RegExp(`^${variable}: the development default is refused`));
});
