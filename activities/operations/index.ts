import { describeWorker } from './describe-worker';

/** Activities every worker registers, whatever its task queue. */
export function createOperationsActivities() {
  return { describeWorker };
}

export type OperationsActivities = ReturnType<typeof createOperationsActivities>;
