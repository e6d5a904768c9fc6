import { finalFailure } from './failures';
import { PlatformError } from '../lib/errors';

/**
 * Runs an activity's work so that a refusal from data/ (a PlatformError: not found, already decided, the
 * four-eyes rule…) fails the activity for good, with its code as the failure type: retrying cannot change it. Any
 * other error stays retryable.
 */
export async function refusalsAreFinal<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof PlatformError) throw finalFailure(error.code, error.message);
    throw error;
  }
}
