import type { TemporalHandle } from '../../temporal-config/client';

/** The priority and fairness key a run was started with, as Temporal describes the run (decision 046). */
export async function fairShareOfRun(temporal: Pick<TemporalHandle, 'client'>, workflowId: string, runId?: string) {
  const described = await temporal.client.workflow.getHandle(workflowId, runId).describe();
  const priority = described.raw.workflowExecutionInfo?.priority;
  return { priorityKey: priority?.priorityKey ?? null, fairnessKey: priority?.fairnessKey || null };
}
