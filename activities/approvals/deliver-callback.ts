import { callbackPathProblem, Decision } from '../../domain/approvals';
import { ApprovalsDeps } from './deps';
import { finalFailure } from '../failures';

export interface CallbackInput {
  callbackPath: string;
  decision: Decision;
  revision: number;
  correlationId: string;
}

/**
 * POSTs the outcome to the component's approval callback with the internal token. Any answer but 2xx
 * fails the attempt, and the workflow's retry policy tries again until the component takes it; the
 * component treats the same revision twice as a no-op, so repeating is safe.
 */
export function deliverCallback({ config }: ApprovalsDeps) {
  return async (input: CallbackInput): Promise<void> => {
    // The internal token goes with this request: only to the API itself, whoever started the run.
    const problem = callbackPathProblem(input.callbackPath);
    const target = problem ? null : new URL(input.callbackPath, config.api.internalUrl);
    if (!target || target.origin !== new URL(config.api.internalUrl).origin) {
      throw finalFailure('VALIDATION_FAILED', `The approval callback was not sent: ${problem ?? 'the callback path leaves the API'}.`);
    }
    const answer = await fetch(target, {
      method: 'POST',
      headers: { authorization: `Bearer ${config.secrets.internalToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision: input.decision, revision: input.revision, correlationId: input.correlationId }),
      redirect: 'manual',
      signal: AbortSignal.timeout(30000),
    });
    if (answer.status < 200 || answer.status >= 300) {
      throw new Error(`the approval callback ${input.callbackPath} answered ${answer.status}`);
    }
  };
}
