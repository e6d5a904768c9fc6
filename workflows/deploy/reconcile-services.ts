import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import * as wf from '@temporalio/workflow';
import { deployActivities } from './activities';
import { ReconcileServicesInput, scaleWorkflowId } from './definitions';
import { SearchAttributeKeys } from '../../domain/search-attributes';
import { scaleService } from './scale-service';
import { JobNames } from '../../domain/job-log';
import { reconcileInputProblem } from '../../domain/deploy';
import { refuseInvalidInput } from '../valid-input';

/** Ticks started before this marker wrote no job-log row; they replay as they were. */
export const RECONCILE_JOB_LOG = 'reconcile-job-log';

/**
 * The reconcile schedule's run: every running service is brought back to its desired count by its own
 * `scale:{name}` run. A service already being scaled is left to that run.
 */
export async function reconcileServices(input: ReconcileServicesInput): Promise<{ services: string[]; skipped: string[]; failed: string[] }> {
  refuseInvalidInput(reconcileInputProblem(input));
  const act = deployActivities(input);
  const startedAt = new Date(Date.now()).toISOString();
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
  if (wf.patched(RECONCILE_JOB_LOG)) {
    const reconciled = services.filter((name) => !skipped.includes(name) && !failed.includes(name));
    await act.recordJobRun({
      jobName: JobNames.deployReconcile,
      jobKey: wf.workflowInfo().runId,
      outcome: failed.length > 0 ? 'FAILED' : 'SUCCESS',
      startedAt,
      rowsAffected: reconciled.length,
      message: [
        `reconciled ${reconciled.length} service(s)${reconciled.length ? `: ${reconciled.join(', ')}` : ''}`,
        ...(skipped.length ? [`left to their running scale: ${skipped.join(', ')}`] : []),
        ...(failed.length ? [`failed: ${failed.join(', ')}`] : []),
      ].join('; '),
    });
  }
  return { services, skipped, failed };
}
