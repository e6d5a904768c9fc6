import * as wf from '@temporalio/workflow';
import type { MessagingActivities } from '../../activities/messaging';
import { reasonOf } from '../failure-reason';
import { MAX_DELIVERY_ATTEMPTS, SendEmailInput } from './definitions';
import { sendEmailInputProblem } from '../../domain/messaging';
import { refuseInvalidInput } from '../valid-input';

const deliver = wf.proxyActivities<MessagingActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: MAX_DELIVERY_ATTEMPTS, initialInterval: '1 second', backoffCoefficient: 2, nonRetryableErrorTypes: ['PERMANENT_FAILURE'] },
});
const record = wf.proxyActivities<MessagingActivities>({ startToCloseTimeout: '30 seconds', retry: { initialInterval: '1 second' } });

/**
 * Sends the message one email log row stands for. Temporary failures are retried with backoff; once the
 * attempts are spent the row becomes FAILED with the last reason. The row is PENDING until then.
 */
export async function sendEmail(input: SendEmailInput): Promise<'SUCCESS' | 'FAILED'> {
  refuseInvalidInput(sendEmailInputProblem(input));
  try {
    return await deliver.deliverEmail(input);
  } catch (error) {
    const reason = reasonOf(error);
    await record.failEmailLog({ logId: input.logId, reason });
    return 'FAILED';
  }
}
