import { finalFailure, retryableFailure } from '../failures';
import { findEmailLog, markFailed } from '../../data/messaging/email-logs';
import { deliverLoggedEmail } from './deliver-logged-email';
import { MessagingDeps } from './deps';

/** One send (`email:{logId}`): a temporary failure is thrown for Temporal's retry policy to try again. */
export function deliverEmail({ db, config }: MessagingDeps) {
  return async (input: { logId: string }): Promise<'SUCCESS' | 'FAILED'> => {
    const log = await findEmailLog(db, input.logId);
    if (!log) throw finalFailure('PERMANENT_FAILURE', `email log ${input.logId} does not exist`);
    const delivered = await deliverLoggedEmail(db, config, log);
    if (delivered.outcome === 'RETRY') throw retryableFailure('TEMPORARY_FAILURE', delivered.reason ?? 'temporary failure');
    return delivered.outcome;
  };
}

/** Once the retries are spent: the row becomes FAILED (`temporary-failure`) with the last reason. */
export function failEmailLog({ db }: MessagingDeps) {
  return async (input: { logId: string; reason: string }): Promise<void> => {
    await markFailed(db, input.logId, input.reason, 'temporary-failure');
  };
}
