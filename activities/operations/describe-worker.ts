import os from 'node:os';
import { Context } from '@temporalio/activity';
import { WorkerDescription } from '../../domain/operations';

export interface DescribeWorkerInput {
  taskQueue: string;
}

/** Answers which worker process ran it; safe to repeat. */
export async function describeWorker(input: DescribeWorkerInput): Promise<WorkerDescription> {
  const { info } = Context.current();
  return {
    taskQueue: input.taskQueue,
    pid: process.pid,
    hostname: os.hostname(),
    activityTaskQueue: info.taskQueue,
    answeredAt: new Date().toISOString(),
    fairShare: { priorityKey: info.priority?.priorityKey ?? null, fairnessKey: info.priority?.fairnessKey || null },
  };
}
