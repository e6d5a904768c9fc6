import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import * as wf from '@temporalio/workflow';
import { deployActivities } from './activities';
import { ReconcileServicesInput, scaleWorkflowId } from './definitions';
import { SearchAttributeKeys } from '../../domain/search-attributes';
import { scaleService } from './scale-service';

/**
 * The reconcile schedule's run: every running service is brought back to its desired count by its own
 * `scale:{name}` run. A service already being scaled is left to that run.
 */
export async function reconcileServices(input: ReconcileServicesInput): Promise<{ services: string[]; skipped: string[]; failed: string[] }> {
  const act = deployActivities(input);
  const services = await act.listReconcilableServices();
  const skipped: string[] = [];
  const failed: string[] = [];
  await Promise.all(
    services.map(async (serviceName) => {
      try {
        await wf.executeChild(scaleService, {
          workflowId: scaleWorkflowId(serviceName),
          args: [{ serviceName, healthTimeoutSeconds: input.healthTimeoutSeconds, drainSeconds: input.drainSeconds }],
          parentClosePolicy: wf.ParentClosePolicy.ABANDON,
          typedSearchAttributes: [{ key: SearchAttributeKeys.ServiceName, value: serviceName }],
        });
      } catch (error) {
        if (error instanceof WorkflowExecutionAlreadyStartedError) skipped.push(serviceName);
        else failed.push(serviceName);
      }
    }),
  );
  return { services, skipped, failed };
}
