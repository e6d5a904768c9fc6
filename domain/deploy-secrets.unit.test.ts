import { maskEnv, maskSecretValues } from './deploy-secrets';

const env = {
  GREETING: 'salaam',
  DB_PASSWORD: 'hunter2-very-secret',
  DATABASE_URL: 'postgres://app:pg-pass-4321@db:5432/app',
  JDBC_CONNECTION: 'jdbc:postgresql://db/app?user=app&password=jdbc-pass-9876&ssl=true',
  ANALYTICS_DSN: "host=warehouse user=etl password='dsn pass 5555' dbname=facts",
  CACHE_URL: 'redis://cache:6379/0',
};

test('the API shows env values with every secret hidden: secret-looking keys, and passwords inside URLs, JDBC strings and DSNs', () => {
  expect(maskEnv(env)).toEqual({
    GREETING: 'salaam',
    DB_PASSWORD: '****',
    DATABASE_URL: 'postgres://app:****@db:5432/app',
    JDBC_CONNECTION: 'jdbc:postgresql://db/app?user=app&password=****&ssl=true',
    ANALYTICS_DSN: 'host=warehouse user=etl password=**** dbname=facts',
    CACHE_URL: 'redis://cache:6379/0',
  });
});

test('a service log line that prints its settings keeps none of their secrets', () => {
  const line = `start greeting=salaam secret=hunter2-very-secret db=${env.DATABASE_URL} jdbc=${env.JDBC_CONNECTION} dsn=${env.ANALYTICS_DSN} pass-alone=pg-pass-4321`;
  const masked = maskSecretValues(line, env);
  for (const secret of ['hunter2-very-secret', 'pg-pass-4321', 'jdbc-pass-9876', 'dsn pass 5555']) expect(masked).not.toContain(secret);
  expect(masked).toContain('greeting=salaam');
  expect(masked).toContain('db=postgres://app:****@db:5432/app');
});
