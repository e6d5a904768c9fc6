import pg from 'pg';
import { problemOf } from '../../api/http/problem';
import { createDb } from '../../data/db';
import { ErrorCatalogue } from '../../lib/errors';
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
  const unclassified = errors
    .filter((error) => !isDatabaseUnavailable(error, { fromDatabase: true }))
    .map((error) => `${(error as { code?: string }).code ?? '-'}: ${error.message}`);
  expect([...new Set(unclassified)]).toEqual([]);
}, 120000);

test('a wrong query stays a wrong query, whatever words its inlined values end with', () => {
  const hostile = Object.assign(
    new Error('insert into "t" ("name") values (\'x - Connection terminated unexpectedly\') - duplicate key value violates unique constraint "t_name"'),
    { code: '23505' },
  );
  expect(isDatabaseUnavailable(hostile, { fromDatabase: true })).toBe(false);
  const spoofedEnd = Object.assign(new Error('select 1 - Connection terminated unexpectedly'), { code: '42601' });
  expect(isDatabaseUnavailable(spoofedEnd, { fromDatabase: true })).toBe(false);
  expect(
    isDatabaseUnavailable(new Error('update "email"."email_log" set "status" = \'SUCCESS\' - Connection terminated unexpectedly'), { fromDatabase: true }),
  ).toBe(true);
});

/** What PostgreSQL itself raised for `sql` on `client`, or null when it ran. */
const refusalOf = (client: pg.Client, sql: string) =>
  client.query(sql).then(
    () => null,
    (error: Error) => error,
  );

test('a refusal the caller can act on is named, from the errors PostgreSQL itself raises: a lost race 409 CONCURRENT_UPDATE, a lock wait cut short 503 DATABASE_BUSY, a refused value 400 CONSTRAINT_VIOLATED; never the statement or its values', async () => {
  const [first, second] = [new pg.Client({ connectionString: server.url }), new pg.Client({ connectionString: server.url })];
  await Promise.all([first.connect(), second.connect()]);
  try {
    await first.query('create table refusal_probe (id int primary key, n int not null check (n >= 0))');
    await first.query('insert into refusal_probe values (1, 0), (2, 0)');

    // A lost race: two serializable transactions each read what the other then writes (write skew).
    for (const client of [first, second]) await client.query('begin isolation level serializable; select sum(n) from refusal_probe');
    await first.query('update refusal_probe set n = n + 1 where id = 1');
    await second.query('update refusal_probe set n = n + 1 where id = 2');
    await first.query('commit');
    const race = await refusalOf(second, 'commit');

    // A lock wait cut short: the row is held by another transaction longer than lock_timeout.
    await first.query('begin; select * from refusal_probe where id = 1 for update');
    const busy = await refusalOf(second, "set lock_timeout = '100ms'; update refusal_probe set n = 7 where id = 1");
    await first.query('rollback');

    // A value the schema refuses.
    const refused = await refusalOf(second, 'insert into refusal_probe values (3, -41)');

    const named = [race, busy, refused].map((error) => {
      const problem = problemOf(error);
      return {
        sqlState: (error as { code?: string } | null)?.code,
        code: problem.code,
        status: ErrorCatalogue[problem.code].status,
        retryAfterSeconds: problem.retryAfterSeconds,
        leaks: /refusal_probe|-41|update|insert/i.test(problem.detail),
      };
    });
    expect(named).toEqual([
      { sqlState: '40001', code: 'CONCURRENT_UPDATE', status: 409, retryAfterSeconds: 1, leaks: false },
      { sqlState: '55P03', code: 'DATABASE_BUSY', status: 503, retryAfterSeconds: 5, leaks: false },
      { sqlState: '23514', code: 'CONSTRAINT_VIOLATED', status: 400, retryAfterSeconds: undefined, leaks: false },
    ]);
    // Any other refusal (a wrong query) stays a 500, whose detail says nothing of it either.
    const wrong = problemOf(await refusalOf(second, 'select nope from refusal_probe'));
    expect(wrong).toEqual({ code: 'INTERNAL_ERROR', detail: expect.not.stringMatching(/nope|refusal_probe/) });
  } finally {
    await Promise.all([first.end(), second.end()]);
  }
});
