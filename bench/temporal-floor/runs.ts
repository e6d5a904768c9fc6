/**
 * The floors as a bench runs them: their worker, a plain client on the platform's connection (its token where
 * the server wants one, none of its codec), and one run of the floor beneath a publish through approval.
 * bench/publish and bench/fairness both measure it.
 */
import { ChildProcess } from 'node:child_process';
import { Client } from '@temporalio/client';
import type { Priority } from '@temporalio/common';
import { BenchPlatform, startEntryUntil } from '../support';
import { decideUpdate, oneValidatedUpdate } from './workflows';

export const FLOOR_QUEUE = 'bench-temporal-floor';

export interface Floor {
  client: Client;
  worker: ChildProcess;
}

/** The floors' worker, a process of its own as the platform's workers are, and a client to start them with. */
export async function startFloor(platform: BenchPlatform): Promise<Floor> {
  const worker = await startEntryUntil({
    entry: 'bench/temporal-floor/worker.ts',
    argv: [FLOOR_QUEUE],
    env: platform.env,
    says: 'floor worker running',
    what: 'the floor worker',
  });
  return { worker, client: new Client({ connection: platform.temporal.connection, namespace: platform.config.temporal.namespace }) };
}

/** One run of the floor beneath a publish through one approval stage: a validated Update, then its end. */
export async function approvalFloorRun(client: Client, id: string, priority?: Priority): Promise<void> {
  const handle = await client.workflow.start(oneValidatedUpdate, {
    taskQueue: FLOOR_QUEUE,
    workflowId: `floor-update-${id}-${crypto.randomUUID()}`,
    args: [id],
    ...(priority ? { priority } : {}),
  });
  await handle.executeUpdate(decideUpdate, { args: ['APPROVED'] });
  await handle.result();
}
