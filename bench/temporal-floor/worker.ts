/**
 * `node --require tsx/cjs bench/temporal-floor/worker.ts <task queue>`: the floor's worker, a process of
 * its own as the platform's workers are, on the server and namespace of TEMPORAL_ADDRESS and
 * TEMPORAL_NAMESPACE, with the platform's service token where the server requires one. Prints
 * "floor worker running" once it polls.
 */
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { loadConfig } from '../../lib/config';
import { connectPlatformTemporal } from '../../temporal-config/client';
import { connectPollers } from '../../workers/connection';
import * as activities from './activities';

async function main(): Promise<void> {
  const taskQueue = process.argv[2];
  if (!taskQueue) throw new Error('usage: worker.ts <task queue>');
  const config = loadConfig();
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const platform = await connectPlatformTemporal(config, 'bench-floor-worker');
  // Not renewed: a service token lives 15 minutes, and the floors take about one.
  const connection = await connectPollers(config, platform.serviceToken);
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue,
    workflowsPath: require.resolve('./workflows'),
    activities,
  });
  console.log('floor worker running');
  await worker.run();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
