import { createDb } from '../../data/db';
import { isDatabaseUnavailable } from '../../data/db-errors';
import { OwnPostgres, startOwnPostgres } from '../support/own-postgres';

let server: OwnPostgres;

beforeAll(async () => {
  server = await startOwnPostgres();
}, 120000);

afterAll(async () => {
  await server?.remove();
});

/**
 * A write that meets a restart must be told apart from a wrong query: the email activity waits for the
 * database on the first and fails (and is retried, mailing again) on the second. knex puts the statement in
 * front of the driver's message, so a test of the bare message alone is not enough.
 */
test('every error a query meets while PostgreSQL restarts under it is one the platform calls "database unavailable"', async () => {
  const db = createDb({ databaseUrl: server.url, poolMax: 8 });
  const errors: Error[] = [];
  let stop = false;
  const writer = async () => {
    while (!stop) {
      try {
        await db.raw('select pg_sleep(0.005), 1 as one');
      } catch (error) {
        errors.push(error as Error);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  };
  const writers = Array.from({ length: 8 }, writer);
  await new Promise((resolve) => setTimeout(resolve, 300));
  await server.stop();
  await new Promise((resolve) => setTimeout(resolve, 500));
  await server.start();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  stop = true;
  await Promise.all(writers);
  await db.destroy();
  expect(errors.length).toBeGreaterThan(0);
  const unclassified = errors.filter((error) => !isDatabaseUnavailable(error, { fromDatabase: true })).map((error) => `${(error as { code?: string }).code ?? '-'}: ${error.message}`);
  expect([...new Set(unclassified)]).toEqual([]);
}, 120000);

test('a wrong query stays a wrong query, whatever words its inlined values end with', () => {
  const hostile = Object.assign(new Error('insert into "t" ("name") values (\'x - Connection terminated unexpectedly\') - duplicate key value violates unique constraint "t_name"'), { code: '23505' });
  expect(isDatabaseUnavailable(hostile, { fromDatabase: true })).toBe(false);
  const spoofedEnd = Object.assign(new Error('select 1 - Connection terminated unexpectedly'), { code: '42601' });
  expect(isDatabaseUnavailable(spoofedEnd, { fromDatabase: true })).toBe(false);
  expect(isDatabaseUnavailable(new Error('update "email"."email_log" set "status" = \'SUCCESS\' - Connection terminated unexpectedly'), { fromDatabase: true })).toBe(true);
});
