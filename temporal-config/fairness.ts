import { isGrpcServiceError } from '@temporalio/client';
import { temporal as proto } from '@temporalio/proto';
import { conflict } from '../lib/errors';
import { ALL_TASK_QUEUES, TaskQueue } from '../domain/task-queues';
import { temporalCallError } from './temporal-errors';
import type { TemporalHandle } from './client';

/**
 * Each fairness key's weight lives in Temporal's own configuration of each task queue (decision 046): the
 * matching service reads it where it dispatches, and no copy of ours can drift from it. Both kinds of each
 * queue carry it, since workflow and activity tasks wait in queues of their own.
 */
const KINDS = [proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW, proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY];

const everyQueue = () => ALL_TASK_QUEUES.flatMap((taskQueue) => KINDS.map((taskQueueType) => ({ taskQueue, taskQueueType })));

type Handle = Pick<TemporalHandle, 'connection' | 'namespace'>;

const INVALID_ARGUMENT = 3;
/** The server's `matching.maxFairnessKeyWeightOverrides`, left at its default. */
const MOST_WEIGHTS = 1000;

/** Sets one key's weight on every queue, or takes it away (null): that key then weighs what its runs say, or 1. */
export async function setFairnessWeight(temporal: Handle, key: string, weight: number | null): Promise<void> {
  try {
    for (const { taskQueue, taskQueueType } of everyQueue()) {
      await temporal.connection.workflowService.updateTaskQueueConfig({
        namespace: temporal.namespace,
        identity: 'opsflow-api',
        taskQueue,
        taskQueueType,
        ...(weight === null ? { unsetFairnessWeightOverrides: [key] } : { setFairnessWeightOverrides: { [key]: weight } }),
      });
    }
  } catch (error) {
    if (isGrpcServiceError(error) && error.code === INVALID_ARGUMENT && /exceeding maximum/.test(error.details)) {
      throw conflict('FAIRNESS_WEIGHTS_FULL', `Temporal keeps at most ${MOST_WEIGHTS} weights per task queue: take one away first.`);
    }
    throw temporalCallError(error);
  }
}

/** One key's weight as Temporal holds it, and whether every queue holds that same weight. */
export interface FairnessWeight {
  key: string;
  weight: number;
  onEveryQueue: boolean;
}

/** Every weight set, read back from each queue's configuration. */
export async function fairnessWeights(temporal: Handle): Promise<FairnessWeight[]> {
  const byQueue = await Promise.all(everyQueue().map((queue) => overridesOf(temporal, queue)));
  const keys = [...new Set(byQueue.flatMap((overrides) => Object.keys(overrides)))].sort();
  return keys.map((key) => {
    const weights = byQueue.map((overrides) => overrides[key]);
    const weight = weights.find((value) => value !== undefined)!;
    return { key, weight, onEveryQueue: weights.every((value) => value === weight) };
  });
}

async function overridesOf(
  temporal: Handle,
  queue: { taskQueue: TaskQueue; taskQueueType: proto.api.enums.v1.TaskQueueType },
): Promise<Record<string, number>> {
  try {
    const described = await temporal.connection.workflowService.describeTaskQueue({
      namespace: temporal.namespace,
      taskQueue: { name: queue.taskQueue, kind: proto.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      taskQueueType: queue.taskQueueType,
      reportConfig: true,
    });
    return described.config?.fairnessWeightOverrides ?? {};
  } catch (error) {
    throw temporalCallError(error);
  }
}
