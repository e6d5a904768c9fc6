import * as wf from '@temporalio/workflow';
import { deployActivities } from './activities';
import { ChangeLimitsInput, ChangeLimitsOutcome } from './definitions';
import { limitsInputProblem } from '../../domain/deploy';
import { refuseInvalidInput } from '../valid-input';

/**
 * Changes a running service's limits, on the deployments worker: the only process that changes the engine.
 * Every running container takes the new limits in place, or none does. Then the registry keeps them for the
 * instances the service starts later, and the service's events say who changed them.
 */
export async function changeServiceLimits(input: ChangeLimitsInput): Promise<ChangeLimitsOutcome> {
  refuseInvalidInput(limitsInputProblem(input));
  const act = deployActivities({ healthTimeoutSeconds: 0 });
  // Read once, before any change, and kept in the history: whatever fails later, these are put back.
  const before = await act.readContainerLimits({ serviceName: input.serviceName });
  try {
    const { changed } = await act.applyContainerLimits({ containers: before, limits: input.limits });
    await act.recordServiceLimits({ serviceName: input.serviceName, limits: input.limits, by: input.by, changeId: wf.workflowInfo().runId });
    return { limits: input.limits, changed };
  } catch (error) {
    // All or none: a refusal, an engine that stopped answering or a record that could not be written puts
    // every container back. One that never changed is given the limits it has.
    const { notRestored } = await act.restoreContainerLimits({ containers: before });
    if (notRestored.length > 0) wf.log.warn('instances the engine would not put back to their limits', { serviceName: input.serviceName, notRestored });
    throw error;
  }
}
