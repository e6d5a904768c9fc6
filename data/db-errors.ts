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
