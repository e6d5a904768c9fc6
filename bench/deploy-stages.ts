import { Client } from '@temporalio/client';

type Stamped = { eventTime?: { seconds?: unknown; nanos?: number | null } | null };

/**
 * A deploy's stages as its workflow history records them, in seconds from `requestedAt` (ms since the
 * epoch): when the run started, and each activity from its scheduling to its completion.
 */
export async function deployStages(client: Client, workflowId: string, requestedAt: number): Promise<string[]> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const at = (event: Stamped) => ((Number(event.eventTime!.seconds) * 1000 + (event.eventTime!.nanos ?? 0) / 1e6 - requestedAt) / 1000).toFixed(2);
  const scheduledAt = new Map<string, { name: string; at: string }>();
  const stages: string[] = [];
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) scheduledAt.set(String(event.eventId), { name: scheduled.activityType?.name ?? '?', at: at(event) });
    const completed = event.activityTaskCompletedEventAttributes;
    const activity = completed && scheduledAt.get(String(completed.scheduledEventId));
    if (activity) stages.push(`${activity.name} ${activity.at}-${at(event)}`);
    if (event.workflowExecutionStartedEventAttributes) stages.push(`run started at ${at(event)}`);
  }
  return stages;
}
