import os from 'node:os';
import { Context } from '@temporalio/activity';
import { WorkerDescription } from '../../domain/operations';

export interface DescribeWorkerInput {
  taskQueue: string;
}

/** Answers which worker process ran it; safe to repeat. */
export async function describeWorker(input: DescribeWorkerInput): Promise<WorkerDescription> {
  return {
    taskQueue: input.taskQueue,
    pid: process.pid,
    hostname: os.hostname(),
    activityTaskQueue: Context.current().info.taskQueue,
    answeredAt: new Date().toISOString(),
  };
}
