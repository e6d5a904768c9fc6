import { describeRun, TemporalHandle, workflowUiUrl } from '../../../temporal-config/client';
import { answerWithin } from '../../../temporal-config/temporal-errors';
import { scaleProgressQuery, scaleWorkflowId, undeployProgressQuery, undeployWorkflowId } from '../../../workflows/deploy/definitions';

export interface ServiceOperation {
  kind: 'SCALE' | 'UNDEPLOY';
  workflowId: string;
  runId: string;
  uiUrl: string;
  /** The run's status in Temporal: RUNNING, COMPLETED, FAILED, TERMINATED, … */
  status: string;
  /** Its stage (the run's progress query) while it runs; DONE once completed. */
  stage: string | null;
  startedAt: string;
  closedAt: string | null;
}

const TEMPORAL_WITHIN_MS = 3000;

/**
 * The latest scale and undeploy runs of a service (the scale endpoint's, or the reconcile's), with their
 * stage: what the deployment view shows beside the deployments themselves. Null when Temporal does not
 * answer: the registry's view is answered alone.
 */
export async function serviceOperations(temporal: TemporalHandle, serviceName: string): Promise<ServiceOperation[] | null> {
  const latest = async (kind: ServiceOperation['kind']): Promise<ServiceOperation | null> => {
    const workflowId = kind === 'SCALE' ? scaleWorkflowId(serviceName) : undeployWorkflowId(serviceName);
    const handle = temporal.client.workflow.getHandle(workflowId);
    const description = await describeRun(temporal, workflowId);
    if (!description) return null;
    const status = description.status.name;
    let stage: string | null = status === 'COMPLETED' ? 'DONE' : null;
    if (status === 'RUNNING') {
      const progress = kind === 'SCALE' ? handle.query(scaleProgressQuery) : handle.query(undeployProgressQuery);
      stage = (await progress.catch(() => null))?.stage ?? null;
    }
    return {
      kind,
      workflowId,
      runId: description.runId,
      uiUrl: workflowUiUrl(temporal, workflowId, description.runId),
      status,
      stage,
      startedAt: description.startTime.toISOString(),
      closedAt: description.closeTime?.toISOString() ?? null,
    };
  };
  try {
    const found = await answerWithin(TEMPORAL_WITHIN_MS, Promise.all([latest('SCALE'), latest('UNDEPLOY')]));
    return found.filter((operation): operation is ServiceOperation => operation !== null);
  } catch {
    return null;
  }
}
