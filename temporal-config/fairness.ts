import { temporal as proto } from '@temporalio/proto';
import { conflict, PlatformError } from '../lib/errors';
import { EVERY_TASK_QUEUE_KIND } from './task-queue-kinds';
import { temporalCallError } from './temporal-errors';
import type { TemporalHandle } from './client';

/*
 * Each fairness key's weight lives in Temporal's own configuration of each task queue (decision 046): the
 * matching service reads it where it dispatches, and no copy of ours can drift from it. Both kinds of each
 * queue carry it, since workflow and activity tasks wait in queues of their own.
 */

type Handle = Pick<TemporalHandle, 'connection' | 'namespace'>;

/** The server's `matching.maxFairnessKeyWeightOverrides`, left at its default. */
const MOST_WEIGHTS = 1000;

/** Who changed a weight: Temporal keeps the identity of each change, and refuses one longer than its ids (255). */
const identityOf = (actor: string) => `opsflow-api:${actor}`.slice(0, 200);

/**
 * Sets one key's weight on every queue, or takes it away (null): that key then weighs what its runs say, or
 * 1. Answers whether every queue now holds it, from each change's own answer. A queue that holds the most
 * weights Temporal keeps refuses a new key: that is checked on all of them first, so that none changes.
 */
export async function setFairnessWeight(temporal: Handle, args: { key: string; weight: number | null; actor: string }): Promise<boolean> {
  const queues = EVERY_TASK_QUEUE_KIND;
  if (args.weight !== null) {
    const held = await Promise.all(queues.map((queue) => overridesOf(temporal, queue)));
    if (held.some((overrides) => !(args.key in overrides) && Object.keys(overrides).length >= MOST_WEIGHTS)) {
      throw conflict('FAIRNESS_WEIGHTS_FULL', `Temporal keeps at most ${MOST_WEIGHTS} weights per task queue: take one away first.`);
    }
  }
  const held: boolean[] = [];
  try {
    for (const { taskQueue, taskQueueType } of queues) {
      const answer = await temporal.connection.workflowService.updateTaskQueueConfig({
        namespace: temporal.namespace,
        identity: identityOf(args.actor),
        taskQueue,
        taskQueueType,
        ...(args.weight === null ? { unsetFairnessWeightOverrides: [args.key] } : { setFairnessWeightOverrides: { [args.key]: args.weight } }),
      });
      const now = answer.config?.fairnessWeightOverrides?.[args.key];
      held.push(args.weight === null ? now === undefined : now === Math.fround(args.weight));
    }
  } catch (error) {
    const cause = temporalCallError(error);
    throw new PlatformError(cause.code, `${cause.message} ${held.length} of ${queues.length} task queues took the change: make it again.`);
  }
  return held.every(Boolean);
}

/** One key's weight as Temporal holds it, and whether every queue holds that same weight. */
export interface FairnessWeight {
  key: string;
  weight: number;
  onEveryQueue: boolean;
}

/** Every weight set, read back from each queue's configuration. */
export async function fairnessWeights(temporal: Handle): Promise<FairnessWeight[]> {
  const byQueue = await Promise.all(EVERY_TASK_QUEUE_KIND.map((queue) => overridesOf(temporal, queue)));
  const keys = [...new Set(byQueue.flatMap((overrides) => Object.keys(overrides)))].sort();
  return keys.map((key) => {
    const weights = byQueue.map((overrides) => overrides[key]);
    const weight = weights.find((value) => value !== undefined)!;
    return { key, weight, onEveryQueue: weights.every((value) => value === weight) };
  });
}

async function overridesOf(temporal: Handle, queue: (typeof EVERY_TASK_QUEUE_KIND)[number]): Promise<Record<string, number>> {
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
