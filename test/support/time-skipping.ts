import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';

/**
 * Workers and replays log every state change at INFO; only warnings and errors show. Another file of this
 * jest worker may have installed the runtime already, which is as good.
 */
export function quietWorkerRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // installed before
  }
}

/** The workers' bundle, built once by the fast tier's setup (test/support/unit-setup.ts). */
export function unitWorkflowBundle(): string {
  const bundle = process.env.OPSFLOW_UNIT_WORKFLOW_BUNDLE;
  if (!bundle) throw new Error('The fast tier runs under `npm run test:unit` (its setup bundles the workflows).');
  return bundle;
}

quietWorkerRuntime();

/**
 * The fast tier's Temporal: the time-skipping test server (test/support/unit-setup.ts fetched it), where a
 * workflow's timers fire as soon as nothing else is left to do. Workflows run their real code from the
 * shared bundle; activities are stand-ins given by each test, so only workflow logic is under test here.
 */
export function timeSkippingEnvironment(): Promise<TestWorkflowEnvironment> {
  const path = process.env.OPSFLOW_TIME_SKIPPING_SERVER;
  if (!path) throw new Error('The fast tier runs under `npm run test:unit` (its setup fetches the time-skipping test server).');
  return TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } });
}

let queues = 0;

/** A worker on a queue of its own running the real workflows with the given stand-in activities. */
export async function workerWith(env: TestWorkflowEnvironment, activities: object): Promise<{ worker: Worker; taskQueue: string }> {
  const taskQueue = `unit-${process.pid}-${++queues}`;
  const codePath = unitWorkflowBundle();
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle: { codePath },
    activities,
  });
  return { worker, taskQueue };
}
