import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTemporal } from '../../scripts/platform/temporal';
import { connectTemporal, TemporalHandle } from '../../temporal-config/client';
import { payloadCodecOf } from '../../temporal-config/payload-codec';
import { TaskQueue } from '../../domain/task-queues';
import { RunningApi, TestPlatform } from './platform';
import { freePort } from './slots';

/**
 * A Temporal dev server of the test's own, so that restarting it disturbs no other test file, with an API
 * and workers of `queues` on it. `restartTemporal` stops the server (SIGTERM), or kills it (SIGKILL, as a
 * crash would), and starts it again on the same database file. Everything is stopped and removed afterwards.
 */
export async function withOwnTemporal(
  platform: TestPlatform,
  queues: TaskQueue[],
  work: (own: { api: RunningApi; temporal: TemporalHandle; dbFile: string; restartTemporal(how?: 'stop' | 'kill'): Promise<void> }) => Promise<void>,
): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'opsflow-temporal-restart-'));
  const [port, uiPort] = [await freePort(), await freePort()];
  const serverArgs = {
    dbFile: path.join(dir, 'temporal.db'),
    port,
    uiPort,
    namespaces: [platform.config.temporal.namespace],
    logFile: path.join(dir, 'temporal.log'),
  };
  let server = await startTemporal(serverArgs);
  const temporal = await connectTemporal({
    address: server.address,
    namespace: platform.config.temporal.namespace,
    uiUrl: server.uiUrl,
    payloadCodec: payloadCodecOf(platform.config),
  });
  const api = await platform.startApi({ temporal });
  const worker = await platform.startWorker(queues, { TEMPORAL_ADDRESS: server.address, API_INTERNAL_URL: api.url });
  try {
    await work({
      api,
      temporal,
      dbFile: serverArgs.dbFile,
      restartTemporal: async (how = 'stop') => {
        await (how === 'kill' ? server.kill() : server.stop());
        server = await startTemporal(serverArgs);
      },
    });
  } finally {
    await worker.stop();
    await api.close();
    await temporal.connection.close();
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
