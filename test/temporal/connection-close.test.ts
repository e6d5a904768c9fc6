import net from 'node:net';
import { Connection } from '@temporalio/client';
import { platformGrpcInterceptors } from '../../temporal-config/client';

/**
 * The SDK's retry interceptor keeps its retry timers when a connection is closed; a retry that fires after the
 * close asked the closed channel for a call, which threw inside the timer ("Channel has been shut down"): an
 * uncaught exception that ends the process (a test file's worker in CI, the API or a worker on shutdown).
 */
test("a call still retrying when its connection is closed fails as a call, with no error thrown in the retry's timer", async () => {
  // A port that takes connections and drops them at once: every attempt is UNAVAILABLE, and retried.
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  try {
    const connection = Connection.lazy({ address: `127.0.0.1:${port}`, interceptors: platformGrpcInterceptors() });
    const call = connection.workflowService.getSystemInfo({});
    const settled = call.then(
      () => 'answered',
      (error: Error) => error.message,
    );
    // Some attempts fail and are retried meanwhile; one is waiting on its timer, or in flight, at the close.
    await new Promise((resolve) => setTimeout(resolve, 400));
    await connection.close();
    expect(await settled).toMatch(/CANCELLED|UNAVAILABLE/);
    // Past any retry timer still set at the close: one that threw there would fail this test as uncaught.
    await new Promise((resolve) => setTimeout(resolve, 3000));
  } finally {
    server.close();
  }
});
