import { DefaultFailureConverter } from '@temporalio/common';

/**
 * Failures as the platform's processes hand them to Temporal: a failure's message and stack trace travel in
 * its encoded attributes, a payload that the codec seals like every other (payload-codec.ts), since a
 * message can name what it failed on (a recipient a relay refused, a value it was given). The type,
 * retryability and details keep their place. Loaded by path (platformDataConverter) in the clients, the
 * workers and the workflow sandbox, so that a workflow reads an activity's message as it was thrown.
 * Failures recorded before it carry their message in clear and read as they always did.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
