import { conflict, ErrorCode } from '../lib/errors';

const UNIQUE_VIOLATION = '23505';

/** PostgreSQL's SQLSTATEs turned into the platform's problems, in one place; the database's text never leaks. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const pgError = error as { code?: string; constraint?: string };
  return pgError?.code === UNIQUE_VIOLATION && (constraint === undefined || pgError.constraint === constraint);
}

/** Runs a write and answers 409 `code` when it breaks a unique constraint. */
export async function uniqueOr409<T>(write: () => Promise<T>, code: ErrorCode, detail: string): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(code, detail);
    throw error;
  }
}

/** SQLSTATEs that mean the server is gone or going, not that the query was wrong (08P01, a protocol violation, is a bug). */
const UNAVAILABLE_SQLSTATES = new Set(['08000', '08001', '08003', '08004', '08006', '57P01', '57P02', '57P03', '53300']);
const CONNECTION_LOST_MESSAGE =
  /(?:^| - )(?:Connection terminated(?: unexpectedly| due to connection timeout)?|Client has encountered a connection error and is not queryable|timeout exceeded when trying to connect)$/;
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);

/**
 * The database cannot be reached right now (a restart, a failover, a full pool while it is down): the
 * caller is told 503 DATABASE_UNAVAILABLE and may retry, never a 500. `fromDatabase`: the error is known to
 * come from a database call, so a socket error of an open connection (a reset, a broken pipe, which name no
 * port) is the database's too.
 */
export function isDatabaseUnavailable(error: unknown, options: { fromDatabase?: boolean } = {}): boolean {
  const failure = error as { code?: unknown; name?: unknown; message?: unknown; port?: unknown } | null;
  if (!failure || typeof failure !== 'object') return false;
  if (typeof failure.code === 'string' && UNAVAILABLE_SQLSTATES.has(failure.code)) return true;
  // A socket error names its peer's port when the peer is reached over TCP, as the database is; the Docker
  // engine's socket is a file, and an engine that does not answer is not the database.
  if (typeof failure.code === 'string' && UNAVAILABLE_SOCKET_CODES.has(failure.code) && (options.fromDatabase || typeof failure.port === 'number')) return true;
  if (failure.name === 'KnexTimeoutError') return true;
  // The driver's own words for a connection lost under a query carry no SQLSTATE; knex puts the statement (its
  // values inlined) in front of them, so they are matched at the end of the message and only when no
  // SQLSTATE says otherwise: a hostile value cannot turn a wrong query into a "try again".
  if (typeof failure.code === 'string' && /^[0-9A-Z]{5}$/.test(failure.code)) return false;
  return typeof failure.message === 'string' && CONNECTION_LOST_MESSAGE.test(failure.message);
}

/**
 * Runs a write that must not be lost, trying it again while the database is unavailable (a restart, a
 * failover), with a doubling pause up to 5 s, for at most `maxMs`. Any other error, or the time running
 * out, is thrown.
 */
export async function whenDatabaseIsBack<T>(write: () => Promise<T>, args: { maxMs: number }): Promise<T> {
  const deadline = Date.now() + args.maxMs;
  for (let pause = 250; ; pause = Math.min(pause * 2, 5000)) {
    try {
      return await write();
    } catch (error) {
      if (!isDatabaseUnavailable(error, { fromDatabase: true }) || Date.now() + pause > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** SQLSTATEs of a transaction that lost a race with another (serialization failure, deadlock): the same request again may pass. */
const RACE_SQLSTATES = new Set(['40001', '40P01']);
/** SQLSTATEs of a wait cut short (lock_timeout, statement_timeout): the database is busy, not wrong. */
const BUSY_SQLSTATES = new Set(['55P03', '57014']);
/** SQLSTATEs of a value the schema refuses (a check, a NOT NULL, a length or a range): the request carried it. */
const REFUSED_VALUE_SQLSTATES = new Set(['23514', '23502', '22001', '22003']);

/** A database failure as the caller is told of it; the database's own text (the statement, its values) never. */
export interface DatabaseProblem {
  code: ErrorCode;
  detail: string;
  retryAfterSeconds?: number;
}

/**
 * The one translation of a database failure into the catalogue: unreachable (503 DATABASE_UNAVAILABLE), a
 * lost race (409 CONCURRENT_UPDATE), a wait cut short (503 DATABASE_BUSY), a value the schema refuses (400
 * CONSTRAINT_VIOLATED). Null for anything else, which is a bug and answers 500. A unique violation is the
 * route's own to name (uniqueOr409), since only it knows which resource already exists.
 */
export function databaseProblemOf(error: unknown): DatabaseProblem | null {
  if (isDatabaseUnavailable(error))
    return { code: 'DATABASE_UNAVAILABLE', detail: 'The database cannot be reached just now; try again shortly.', retryAfterSeconds: 5 };
  const sqlState = (error as { code?: unknown } | null)?.code;
  if (typeof sqlState !== 'string') return null;
  if (RACE_SQLSTATES.has(sqlState))
    return { code: 'CONCURRENT_UPDATE', detail: 'Another change to the same data was made at the same moment; send the request again.', retryAfterSeconds: 1 };
  if (BUSY_SQLSTATES.has(sqlState))
    return { code: 'DATABASE_BUSY', detail: 'The database is too busy to answer in time; try again shortly.', retryAfterSeconds: 5 };
  if (REFUSED_VALUE_SQLSTATES.has(sqlState))
    return { code: 'CONSTRAINT_VIOLATED', detail: 'A value of the request breaks a rule of the stored data (a range, a length or a required field).' };
  return null;
}
